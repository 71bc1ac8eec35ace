// The demo's UI, shared by the ES-module page and the script-tag page. It uses
// only the public API: providers with token functions (no secret lives in the
// page), VoiceSession and its events.
import { CONTROLS_MARKUP, SAY_MARKUP, controlElements, controlOptions, showError, wireControls } from "./controls.js";

/**
 * Asks the page's own server for a short-lived token; the server holds the secret. `service`: for a
 * hosted service's emulator, the server mints that service's own kind of token (demo/README.md).
 */
async function fetchToken(service) {
  const response = await fetch(service ? `/api/token?service=${service}` : "/api/token", { cache: "no-store" });
  if (!response.ok) throw new Error(`token endpoint answered ${response.status}`);
  const { token } = await response.json();
  return token;
}

/**
 * The speech services the picker offers. "reference" is the offline Kyutai-protocol backend; the
 * others speak the hosted services' protocols to the reference backend's emulators, which are not
 * the services (README: "The emulators are not the services"). `ws`: the backend's WebSocket origin.
 */
const STT_CHOICES = {
  reference: { label: "Reference (Kyutai protocol)", make: (B, ws, query) => B.kyutaiStt({ urls: [`${ws}/api/asr-streaming${query}`], token: () => fetchToken() }) },
  deepgram: { label: "Deepgram Nova (emulated)", make: (B, ws, query) => B.deepgramStt({ urls: `${ws}${query}`, token: () => fetchToken("deepgram"), model: "nova-3" }) },
  "deepgram-flux": { label: "Deepgram Flux (emulated)", make: (B, ws, query) => B.deepgramStt({ urls: `${ws}${query}`, token: () => fetchToken("deepgram"), model: "flux-general-en" }) },
  assemblyai: { label: "AssemblyAI (emulated)", make: (B, ws, query) => B.assemblyaiStt({ urls: `${ws}${query}`, token: () => fetchToken("assemblyai") }) },
};
const TTS_CHOICES = {
  reference: { label: "Reference (Kyutai protocol)", make: (B, ws) => B.kyutaiTts({ urls: [`${ws}/api/tts_streaming`], voice: "slt", token: () => fetchToken() }) },
  elevenlabs: { label: "ElevenLabs (emulated)", make: (B, ws) => B.elevenlabsTts({ voiceId: "slt", url: ws, token: () => fetchToken("elevenlabs") }) },
  cartesia: { label: "Cartesia (emulated)", make: (B, ws) => B.cartesiaTts({ voiceId: "slt", url: ws, token: () => fetchToken("cartesia") }) },
};
const options = (choices) => Object.entries(choices).map(([value, { label }]) => `<option value="${value}">${label}</option>`).join("");

/** The demo's markup, shared by both pages (static: no user data goes through innerHTML). */
const MARKUP = `
<section class="controls">
  <button data-testid="start" id="start">Start</button>
  <button data-testid="stop" id="stop" disabled>Stop</button>
  <button data-testid="interrupt" id="interrupt" disabled title="Stop the bot's reply now">Interrupt</button>
  <label>Speech to text
    <select id="stt-service" data-testid="stt-service">${options(STT_CHOICES)}</select>
  </label>
  <label>Text to speech
    <select id="tts-service" data-testid="tts-service">${options(TTS_CHOICES)}</select>
  </label>
  <label>LLM transport
    <select id="llm-transport" data-testid="llm-transport">
      <option value="sse">OpenAI-compatible (SSE)</option>
      <option value="ws">WebSocket (Responses events)</option>
    </select>
  </label>
  <span class="state" data-testid="state" id="state">idle</span>
</section>
${CONTROLS_MARKUP}
<section class="meters">
  <div class="meter"><span>mic</span><div class="bar"><div id="mic-level" data-testid="mic-level"></div></div></div>
  <div class="meter"><span>voice</span><div class="bar"><div id="vad-level" data-testid="vad-level"></div></div></div>
  <div class="meter"><span>bot</span><div class="bar"><div id="output-level" data-testid="output-level"></div></div></div>
  <div class="meter"><span>uplink</span><div class="bar"><div id="uplink-level" data-testid="uplink-level"></div></div><span id="uplink-text" data-testid="uplink-text"></span></div>
</section>
<section class="conversation">
  <h2>Conversation</h2>
  <ol id="transcript" data-testid="transcript"></ol>
  <p class="partial" id="partial" data-testid="partial"></p>
  ${SAY_MARKUP}
</section>
<section class="timeline">
  <h2>Latency per turn <small>(ms from the end of your speech)</small></h2>
  <svg id="timeline" data-testid="timeline" width="100%" height="0" role="img" aria-label="latency per turn"></svg>
</section>
<section class="log">
  <h2>Events</h2>
  <ol id="events" data-testid="events"></ol>
</section>
  
`;

export function runDemo(Bargein, { assetsPath }) {
  const app = document.getElementById("app");
  app.innerHTML = MARKUP;
  const $ = (id) => document.getElementById(id);
  const ui = {
    start: $("start"), stop: $("stop"), interrupt: $("interrupt"), transport: $("llm-transport"),
    sttService: $("stt-service"), ttsService: $("tts-service"),
    state: $("state"), mic: $("mic-level"), vad: $("vad-level"), uplink: $("uplink-level"), uplinkText: $("uplink-text"),
    transcript: $("transcript"), partial: $("partial"), timeline: $("timeline"), events: $("events"),
  };
  const controls = controlElements($);
  // `?stt=deepgram&tts=cartesia` preselects the services (for links, and for the tests).
  const params = new URLSearchParams(location.search);
  for (const [select, choices, key] of [[ui.sttService, STT_CHOICES, "stt"], [ui.ttsService, TTS_CHOICES, "tts"]]) {
    const wanted = params.get(key);
    if (wanted && wanted in choices) select.value = wanted;
  }
  const turns = [];
  let session;
  let assistantItem;

  function log(kind, text) {
    const li = document.createElement("li");
    li.className = kind;
    li.textContent = `${new Date().toLocaleTimeString()} ${kind}: ${text}`;
    ui.events.prepend(li);
  }

  function addMessage(role, text) {
    const li = document.createElement("li");
    li.className = role;
    li.dataset.role = role;
    li.textContent = text;
    ui.transcript.append(li);
    return li;
  }

  function showInterrupted(li, heard, unheard) {
    li.replaceChildren();
    const heardSpan = document.createElement("span");
    heardSpan.className = "heard";
    heardSpan.dataset.testid = "heard";
    heardSpan.textContent = heard;
    const unheardSpan = document.createElement("span");
    unheardSpan.className = "unheard";
    unheardSpan.dataset.testid = "unheard";
    unheardSpan.textContent = unheard ? ` ${unheard}` : "";
    const tag = document.createElement("span");
    tag.className = "tag";
    tag.textContent = "interrupted";
    li.append(heardSpan, unheardSpan, tag);
    li.dataset.interrupted = "true";
  }

  function drawTimeline() {
    const svgNS = "http://www.w3.org/2000/svg";
    // From the user's real end of speech (the VAD's last speech frame): the turn-end decision comes
    // voiceEndToDecisionMs later, and the rest are measured from that decision.
    const keys = [
      ["voiceEndToDecisionMs", "turn end decided", "#999999"],
      ["speechEndToSttFinalMs", "STT final", "#6a9f6a"],
      ["speechEndToFirstTokenMs", "first token", "#7b68c8"],
      ["speechEndToFirstAudioByteMs", "first audio byte", "#4062bb"],
      ["speechEndToFirstAudibleMs", "audible", "#c07a12"],
    ];
    const rowH = 22;
    const shown = turns.slice(-8);
    const offset = (turn, key) => (key === "voiceEndToDecisionMs" ? 0 : turn.voiceEndToDecisionMs ?? 0);
    const maxMs = Math.max(500, ...shown.flatMap((t) => keys.map(([k]) => (t[k] ?? 0) + offset(t, k))));
    ui.timeline.setAttribute("height", String(shown.length * rowH + 24));
    ui.timeline.replaceChildren();
    const width = ui.timeline.clientWidth || 700;
    const x = (ms) => 70 + (ms / maxMs) * (width - 90);
    shown.forEach((turn, i) => {
      const y = i * rowH + 4;
      const label = document.createElementNS(svgNS, "text");
      label.setAttribute("x", "0");
      label.setAttribute("y", String(y + 13));
      label.textContent = `turn ${turn.turn}${turn.interrupted ? " ✂" : ""}`;
      ui.timeline.append(label);
      for (const [key, name, color] of keys) {
        if (turn[key] === undefined) continue;
        const ms = turn[key] + offset(turn, key);
        const mark = document.createElementNS(svgNS, "rect");
        mark.setAttribute("x", String(x(ms) - 2));
        mark.setAttribute("y", String(y));
        mark.setAttribute("width", "4");
        mark.setAttribute("height", String(rowH - 6));
        mark.setAttribute("fill", color);
        const title = document.createElementNS(svgNS, "title");
        title.textContent = `${name}: ${Math.round(ms)} ms`;
        mark.append(title);
        ui.timeline.append(mark);
      }
      // The label is what the user felt, voice to voice, where it is known (not for a typed turn).
      const audible = turn.voiceToVoiceMs ?? turn.speechEndToFirstAudibleMs;
      if (audible !== undefined) {
        const text = document.createElementNS(svgNS, "text");
        text.setAttribute("x", String(Math.min(x(audible) + 6, width - 150)));
        text.setAttribute("y", String(y + 13));
        text.dataset.testid = "turn-latency";
        text.textContent = turn.voiceToVoiceMs !== undefined ? `${Math.round(audible)} ms voice to voice` : `${Math.round(audible)} ms`;
        ui.timeline.append(text);
      }
    });
    const legend = document.createElementNS(svgNS, "text");
    legend.setAttribute("x", "70");
    legend.setAttribute("y", String(shown.length * rowH + 18));
    legend.textContent = keys.map(([, name]) => name).join("  →  ");
    ui.timeline.append(legend);
  }

  function makeSession() {
    const ws = location.origin.replace(/^http/, "ws");
    // The reference STT loads a pocketsphinx decoder when its pool is empty (~0.5 s): allow it more than the 0.5 s default.
    // `?stt_query=…` passes the reference backend's fault knobs (demo/README.md) to the STT URL,
    // e.g. `?stt_query=rate_bps%3D2000` (a slow uplink) to watch the uplink meter and overload events.
    const sttQuery = params.get("stt_query");
    const stt = STT_CHOICES[ui.sttService.value].make(Bargein, ws, sttQuery ? `?${sttQuery}` : "");
    const tts = TTS_CHOICES[ui.ttsService.value].make(Bargein, ws);
    const llm =
      ui.transport.value === "ws"
        ? Bargein.websocketLlm({ url: `${ws}/v1/responses`, token: () => fetchToken() })
        : Bargein.openaiChat({ url: `${location.origin}/v1`, model: "eliza", token: () => fetchToken() });
    const created = new Bargein.VoiceSession({
      stt, llm, tts, assetsPath,
      ...controlOptions(controls),
      instructions: "You are a friendly, brief voice assistant.",
      meter: true,
      // The reference LLM calls get_time when asked "what time is it" (demo/server/eliza-tools.mjs).
      tools: { definitions: [{ name: "get_time", description: "The time now, where the user is.", parameters: { type: "object", properties: {} } }] },
    });
    created.handleTool("get_time", () => new Date().toLocaleTimeString("en-US", { hour: "numeric", minute: "2-digit" }));
    return created;
  }

  function setRunning(running) {
    ui.start.disabled = running;
    ui.stop.disabled = !running;
    ui.transport.disabled = running;
    ui.sttService.disabled = running;
    ui.ttsService.disabled = running;
  }

  ui.start.addEventListener("click", async () => {
    setRunning(true);
    session = makeSession();
    window.demoSession = session; // for people poking at it in the console, and for the tests
    const wired = wireControls(controls, session, { log });
    session.on("state", ({ state }) => state === "idle" && wired.stopped());
    session.on("state", ({ state }) => {
      ui.state.textContent = state.replace("_", " ");
      ui.state.className = `state ${state}`;
      ui.interrupt.disabled = !(state === "bot_speaking" || state === "bot_thinking");
    });
    session.on("transcript", ({ role, text, final }) => {
      if (role === "user") {
        if (final) {
          addMessage("user", text);
          ui.partial.textContent = "";
        } else ui.partial.textContent = text;
      } else {
        assistantItem ??= addMessage("assistant", "");
        if (assistantItem.dataset.interrupted !== "true") assistantItem.textContent = text;
        if (final) assistantItem = undefined;
      }
    });
    // A tool call is a row of its own, above the reply that uses it; its result fills it in.
    const toolRows = new Map();
    session.on("toolCall", ({ call }) => {
      const li = addMessage("tool", `${call.name}(${call.rawArguments || ""}) …`);
      li.dataset.testid = "tool-call";
      if (assistantItem) ui.transcript.insertBefore(li, assistantItem);
      toolRows.set(call.id, li);
    });
    session.on("toolResult", ({ id, name, status, output, durationMs }) => {
      const li = toolRows.get(id);
      if (li) li.textContent = `${name} → ${status === "ok" ? output : status} (${Math.round(durationMs)} ms)`;
      toolRows.delete(id);
    });
    session.on("interruption", ({ heardText, unheardText, heardMs, reason }) => {
      const li = assistantItem ?? [...ui.transcript.querySelectorAll("li.assistant")].at(-1);
      if (li) showInterrupted(li, heardText, unheardText);
      log("interruption", `${reason}: heard ${Math.round(heardMs)} ms — “${heardText}”`);
    });
    session.on("vad", (e) => {
      if (e.kind === "meter") {
        ui.mic.style.width = `${Math.min(100, e.level * 300)}%`;
        ui.vad.style.width = `${Math.round(e.probability * 100)}%`;
      } else log("vad", e.kind + (e.direct ? " (worker paused playback directly)" : ""));
    });
    session.on("turn", (metrics) => {
      turns.push(metrics);
      drawTimeline();
    });
    session.on("metrics", (m) => {
      const u = m.uplink;
      if (!u) return;
      const fill = Math.min(100, (u.pendingBytes / u.budgetBytes) * 100);
      ui.uplink.style.width = `${fill}%`;
      ui.uplink.classList.toggle("over", u.admissionRejects > 0 && fill >= 99);
      ui.uplinkText.textContent = `${u.pendingBytes} / ${u.budgetBytes} B, rejects ${u.admissionRejects}, gap ${u.gapSamples}`;
    });
    session.on("overload", (e) => log("warning", `uplink overload (${e.reason}): policy ${e.policy}, ${e.pendingBytes} of ${e.budgetBytes} bytes pending`));
    session.on("warning", (e) => log("warning", `${e.service}: ${e.message}`));
    session.on("error", (e) => log("error", `${e.error.name}: ${e.error.message}${e.fatal ? " (session stopped)" : ""}`));
    try {
      await session.start();
      wired.listening();
      log("info", "listening — say something");
    } catch (err) {
      log("error", `${err.name}: ${err.message}`);
      showError(controls, `${err.name}: ${err.message}`);
      wired.stopped();
      setRunning(false);
    }
  });

  ui.stop.addEventListener("click", async () => {
    await session?.stop();
    setRunning(false);
    // (the controls went off with the state's "idle")
    ui.interrupt.disabled = true;
  });

  ui.interrupt.addEventListener("click", () => session?.interrupt());
}
