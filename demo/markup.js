// The demo's markup, shared by the ES-module page and the script-tag page
// (static: no user data goes through innerHTML). The conversation comes
// first; the services and devices sit beside it; the developer's view
// (levels, uplink, latency chart, events) is behind a toggle, closed.
import { LLM_CHOICES, STT_CHOICES, TTS_CHOICES, optionsOf } from "./services.js";

const CONVERSATION = `
<section class="card conversation" aria-label="Conversation">
  <div class="topbar">
    <span class="state-pill" id="state" data-testid="state" data-state="idle" role="status" aria-live="polite">Idle</span>
    <div class="actions">
      <button class="btn" id="talk" data-testid="talk" hidden disabled title="Hold (or hold the space bar) while you speak">Hold to talk</button>
      <button class="btn" id="mute" data-testid="mute" disabled aria-pressed="false">Mute</button>
      <button class="btn" id="interrupt" data-testid="interrupt" disabled title="Stop the bot's reply now">Interrupt</button>
      <button class="btn primary" id="start" data-testid="start">Start</button>
      <button class="btn danger" id="stop" data-testid="stop" disabled>Stop</button>
    </div>
  </div>
  <div class="loading" id="loading" data-testid="loading" hidden>
    <progress id="loading-bar" data-testid="loading-bar" max="1" value="0"></progress>
    <span id="loading-text" data-testid="loading-text"></span>
  </div>
  <div class="error-banner" id="error-banner" data-testid="error-banner" role="alert" hidden>
    <span id="error-text" data-testid="error-text"></span>
    <button class="btn small" id="error-dismiss" data-testid="error-dismiss">Dismiss</button>
  </div>
  <div class="chat" id="chat">
    <p class="empty" id="empty">Press <strong>Start</strong> and say something. Then talk over the bot's answer: it stops at once, and the transcript keeps only what you heard.</p>
    <ol id="transcript" data-testid="transcript"></ol>
    <p class="partial" id="partial" data-testid="partial"></p>
  </div>
  <form class="say" id="say" data-testid="say">
    <input id="say-text" data-testid="say-text" aria-label="Type a message" placeholder="Or type instead of speaking" autocomplete="off" disabled>
    <button class="btn" id="say-send" data-testid="say-send" disabled>Send</button>
  </form>
</section>`;

const SETTINGS = `
<aside class="card settings" aria-label="Settings">
  <h2>Voice services</h2>
  <label class="field"><span>Speech to text</span><select id="stt-service" data-testid="stt-service">${optionsOf(STT_CHOICES)}</select></label>
  <label class="field"><span>Text to speech</span><select id="tts-service" data-testid="tts-service">${optionsOf(TTS_CHOICES)}</select></label>
  <label class="field"><span>Language model</span><select id="llm-transport" data-testid="llm-transport">${optionsOf(LLM_CHOICES)}</select></label>
  <p class="notice" id="service-notice" data-testid="service-notice" hidden></p>
  <h2>Audio</h2>
  <label class="field"><span>Microphone</span><select id="input-device" data-testid="input-device" disabled><option value="">default</option></select></label>
  <label class="field"><span>Speaker</span><select id="output-device" data-testid="output-device" disabled><option value="">default</option></select></label>
  <label class="switch" title="The Hold to talk button opens and closes your turn; the voice detector still hears you over the bot">
    <input type="checkbox" role="switch" id="ptt-mode" data-testid="ptt-mode"> Push-to-talk
  </label>
  <p class="hint">Struck-through text is what the bot had ready but you never heard: you talked over it.</p>
</aside>`;

const DEV_PANEL = `
<details class="card dev" id="dev-panel" data-testid="dev-panel">
  <summary id="dev-toggle" data-testid="dev-toggle">Developer panel <span class="badge" id="dev-badge" data-testid="dev-badge" hidden></span></summary>
  <div class="dev-grid">
    <section>
      <h3>Levels</h3>
      <div class="meters">
        <div class="meter"><span>mic</span><div class="bar"><div id="mic-level" data-testid="mic-level"></div></div></div>
        <div class="meter"><span>voice</span><div class="bar"><div id="vad-level" data-testid="vad-level"></div></div></div>
        <div class="meter"><span>bot</span><div class="bar"><div id="output-level" data-testid="output-level"></div></div></div>
        <div class="meter"><span>uplink</span><div class="bar"><div id="uplink-level" data-testid="uplink-level"></div></div></div>
        <p class="uplink-text" id="uplink-text" data-testid="uplink-text"></p>
      </div>
    </section>
    <section>
      <h3>Latency per turn <small>ms from the end of your speech</small></h3>
      <svg id="timeline" data-testid="timeline" width="100%" height="0" role="img" aria-label="latency per turn"></svg>
    </section>
    <section class="wide">
      <h3>Events</h3>
      <ol id="events" data-testid="events"></ol>
    </section>
  </div>
</details>`;

export const MARKUP = `<div class="layout">${CONVERSATION}${SETTINGS}</div>${DEV_PANEL}`;
