// The demo, shared by the ES-module page and the script-tag page: the
// conversation first, the controls beside it, the developer panel behind a
// toggle. It uses only the public API (VoiceSession and its events).
import { controlElements, controlOptions, showError, wireControls } from "./controls.js";
import { createConversation } from "./conversation.js";
import { createDevPanel } from "./dev-panel.js";
import { MARKUP } from "./markup.js";
import { LLM_CHOICES, STT_CHOICES, TTS_CHOICES, makeSession } from "./services.js";

export function runDemo(Bargein, { assetsPath }) {
  document.getElementById("app").innerHTML = MARKUP;
  const $ = (id) => document.getElementById(id);
  const ui = { start: $("start"), stop: $("stop"), interrupt: $("interrupt"), stt: $("stt-service"), tts: $("tts-service"), llm: $("llm-transport") };
  const controls = controlElements($);
  const conversation = createConversation({ state: $("state"), transcript: $("transcript"), partial: $("partial"), empty: $("empty"), chat: $("chat") });
  const dev = createDevPanel({
    panel: $("dev-panel"), badge: $("dev-badge"), events: $("events"), notice: $("service-notice"),
    mic: $("mic-level"), vad: $("vad-level"), uplink: $("uplink-level"), uplinkText: $("uplink-text"), timeline: $("timeline"),
  });

  // `?stt=deepgram&tts=cartesia&llm=ws` preselects the services (for links, and for the tests);
  // `?stt_query=…` passes the reference backend's fault knobs to the STT URL (demo/README.md).
  const params = new URLSearchParams(location.search);
  for (const [select, choices, key] of [[ui.stt, STT_CHOICES, "stt"], [ui.tts, TTS_CHOICES, "tts"], [ui.llm, LLM_CHOICES, "llm"]]) {
    const wanted = params.get(key);
    if (wanted && wanted in choices) select.value = wanted;
  }
  // `?dev=1` opens the developer panel from the start.
  if (params.get("dev") === "1") $("dev-panel").open = true;

  let session;

  function setRunning(running) {
    ui.start.disabled = running;
    ui.stop.disabled = !running;
    for (const select of [ui.stt, ui.tts, ui.llm]) select.disabled = running;
  }

  ui.start.addEventListener("click", async () => {
    setRunning(true);
    session = makeSession(Bargein, {
      stt: ui.stt.value, tts: ui.tts.value, llm: ui.llm.value,
      sttQuery: params.get("stt_query"), assetsPath, extra: controlOptions(controls),
    });
    window.demoSession = session; // for people poking at it in the console, and for the tests
    const wired = wireControls(controls, session, { log: dev.log });
    conversation.follow(session);
    dev.follow(session);
    session.on("state", ({ state }) => {
      ui.interrupt.disabled = !(state === "bot_speaking" || state === "bot_thinking");
      if (state === "idle") {
        wired.stopped();
        setRunning(false);
      }
    });
    try {
      await session.start();
      wired.listening();
      dev.log("info", "listening — say something");
    } catch (err) {
      dev.log("error", `${err.name}: ${err.message}`);
      showError(controls, `${err.name}: ${err.message}`, { stopped: true });
      wired.stopped();
      setRunning(false);
    }
  });

  ui.stop.addEventListener("click", async () => {
    await session?.stop();
    setRunning(false);
    ui.interrupt.disabled = true;
  });

  ui.interrupt.addEventListener("click", () => session?.interrupt());
}
