// The React demo (demo/react.html): a conversation on bargein/react's
// useVoiceSession, with the reference backend's providers and the page's own
// token endpoint (as demo/ui.js). `npm run build` bundles it into
// demo/react/build/app.js (scripts/react-pages.mjs): React from node_modules,
// the SDK from /dist/bargein.js. No inline script, no eval: it runs under the
// backend's strict CSP.
import { StrictMode, createElement as h, useEffect, useRef, useState } from "react";
import { createRoot } from "react-dom/client";
import { kyutaiStt, kyutaiTts, openaiChat } from "bargein";
import { useVoiceSession } from "bargein/react";

/** Asks the page's own server for a short-lived token; the server holds the secret. */
async function fetchToken() {
  const response = await fetch("/api/token", { cache: "no-store" });
  if (!response.ok) throw new Error(`token endpoint answered ${response.status}`);
  const { token } = await response.json();
  return token;
}

const ws = location.origin.replace(/^http/, "ws");
const PROVIDERS = {
  // The reference STT loads a pocketsphinx decoder when its pool is empty (~0.5 s): allow it more than the 0.5 s default.
  stt: kyutaiStt({ urls: [`${ws}/api/asr-streaming`], token: () => fetchToken() }),
  tts: kyutaiTts({ urls: [`${ws}/api/tts_streaming`], voice: "slt", token: () => fetchToken() }),
  llm: openaiChat({ url: `${location.origin}/v1`, model: "eliza", token: () => fetchToken() }),
  assetsPath: "/dist/",
  instructions: "You are a friendly, brief voice assistant.",
};
/** useVoiceSession reads its options at the first render: one object per mode, and a `key` per mode (App). */
const OPTIONS = {
  open: PROVIDERS,
  "push-to-talk": { ...PROVIDERS, turn: { mode: "push-to-talk" } },
};

/** Push-to-talk is a session option, so switching it makes a new session: a new key, a new component. */
function App() {
  const [mode, setMode] = useState("open");
  return h(Conversation, { key: mode, mode, setMode });
}

function Conversation({ mode, setMode }) {
  const voice = useVoiceSession(OPTIONS[mode]);
  const { state, session } = voice;
  const running = state !== "idle";
  const talking = running && state !== "connecting";
  const [sendError, setSendError] = useState();
  useEffect(() => {
    window.demoSession = session; // for people poking at it in the console, and for the tests
  }, [session]);
  return h(
    "div",
    null,
    h(
      "section",
      { className: "controls" },
      h("button", { "data-testid": "start", disabled: running, onClick: () => voice.start() }, "Start"),
      h("button", { "data-testid": "stop", disabled: !running, onClick: () => voice.stop() }, "Stop"),
      h("button", { "data-testid": "interrupt", disabled: state !== "bot_thinking" && state !== "bot_speaking", onClick: () => voice.interrupt(), title: "Stop the bot's reply now" }, "Interrupt"),
      h("button", { id: "mute", "data-testid": "mute", "aria-pressed": voice.muted, onClick: () => (voice.muted ? voice.unmute() : voice.mute()) }, voice.muted ? "Unmute" : "Mute"),
      h(
        "label",
        { title: "Hold the button while you speak; the VAD still hears you over the bot" },
        h("input", { type: "checkbox", "data-testid": "ptt-mode", checked: mode === "push-to-talk", disabled: running, onChange: (e) => setMode(e.target.checked ? "push-to-talk" : "open") }),
        " push-to-talk",
      ),
      mode === "push-to-talk" && h(TalkButton, { disabled: !talking, startTurn: voice.startTurn, endTurn: voice.endTurn }),
      h("span", { className: `state ${state}`, "data-testid": "state" }, state.replace("_", " ")),
    ),
    // The session listens before the VAD's model is in (degraded until then): the bar stays up till it is.
    (state === "connecting" || voice.degraded) && h(Loading, { loading: voice.loading }),
    h(ErrorBanner, { error: voice.error ?? sendError }),
    h(Levels, { levels: voice.levels, running }),
    h(
      "section",
      { className: "conversation" },
      h("h2", null, "Conversation"),
      h(Transcript, { transcript: voice.transcript, history: voice.history }),
      h(Say, {
        disabled: !talking,
        send: (text) => {
          try {
            voice.sendText(text);
            setSendError(undefined);
          } catch (err) {
            setSendError(err);
          }
        },
      }),
    ),
  );
}

/** Held down, the user's turn is open (`startTurn`); let go, it gets a reply (`endTurn`). */
function TalkButton({ disabled, startTurn, endTurn }) {
  const [held, setHeld] = useState(false);
  const down = (e) => {
    if (held || disabled) return;
    e.preventDefault();
    setHeld(true);
    startTurn();
  };
  const up = () => {
    if (!held) return;
    setHeld(false);
    if (!disabled) endTurn();
  };
  return h("button", { id: "talk", "data-testid": "talk", className: held ? "held" : undefined, disabled, onPointerDown: down, onPointerUp: up, onPointerLeave: up }, "Hold to talk");
}

/** A first start fetches ~16 MB (the Silero model and onnxruntime's wasm): the hook's `loading`. */
function Loading({ loading }) {
  const { loaded = 0, total = 0, cached } = loading ?? {};
  // A compressed answer has no total until its last byte: the bytes so far, then "of" once it is known.
  const amount = total >= loaded && total > 0 ? `${(loaded / 1e6).toFixed(1)} of ${(total / 1e6).toFixed(1)} MB` : `${(loaded / 1e6).toFixed(1)} MB`;
  const text = loading ? `loading the voice detector: ${amount}${cached ? " (from the cache)" : ""}` : "connecting…";
  return h("div", { className: "loading", "data-testid": "loading" }, h("progress", { "data-testid": "loading-bar", max: Math.max(1, total), value: loaded }), h("span", { "data-testid": "loading-text" }, text));
}

/** The last `error` event (or failed start), until the next start() clears it or the user dismisses it. */
function ErrorBanner({ error }) {
  const [dismissed, setDismissed] = useState();
  if (!error || error === dismissed) return null;
  return h(
    "div",
    { className: "error-banner", role: "alert", "data-testid": "error-banner" },
    h("span", { "data-testid": "error-text" }, `${error.name}: ${error.message}`),
    h("button", { "data-testid": "error-dismiss", onClick: () => setDismissed(error) }, "Dismiss"),
  );
}

/** dB to a bar's width: -60 dB and below is empty, 0 dB full. */
const widthOf = (db) => `${Math.max(0, Math.min(100, ((db + 60) / 60) * 100)).toFixed(0)}%`;

/** The mic and the bot's output, read with `levels()` once a frame: the bars move with no re-render. */
function Levels({ levels, running }) {
  const mic = useRef(null);
  const bot = useRef(null);
  useEffect(() => {
    if (!running) return;
    const show = (el, db) => {
      el.style.width = widthOf(db);
      el.dataset.db = String(Math.round(db));
    };
    let frame = requestAnimationFrame(function draw() {
      const { input, output } = levels();
      show(mic.current, input.rmsDb);
      show(bot.current, output.rmsDb);
      frame = requestAnimationFrame(draw);
    });
    return () => {
      cancelAnimationFrame(frame);
      for (const el of [mic.current, bot.current]) if (el) el.style.width = "0%";
    };
  }, [levels, running]);
  const meter = (label, id, ref) => h("div", { className: "meter" }, h("span", null, label), h("div", { className: "bar" }, h("div", { id, "data-testid": id, ref })));
  return h("section", { className: "meters" }, meter("mic", "mic-level", mic), meter("bot", "output-level", bot));
}

/**
 * One row per message id, as the transcript events come; a final row shows the
 * history's text, what the user heard, and an interrupted reply its unheard rest.
 */
function Transcript({ transcript, history }) {
  const heard = new Map(history.map((m) => [m.id, m]));
  return h(
    "ol",
    { id: "transcript", "data-testid": "transcript" },
    transcript.map((row) => {
      const message = row.final ? heard.get(row.id) : undefined;
      const props = { key: row.id, "data-id": row.id, "data-role": row.role, className: row.final ? row.role : `${row.role} partial` };
      if (message?.role === "assistant" && message.interrupted) {
        return h(
          "li",
          { ...props, "data-interrupted": "true" },
          h("span", { className: "heard", "data-testid": "heard" }, message.text),
          h("span", { className: "unheard", "data-testid": "unheard" }, message.unheardText ? ` ${message.unheardText}` : ""),
          h("span", { className: "tag" }, "interrupted"),
        );
      }
      return h("li", props, message ? message.text : row.text);
    }),
  );
}

/** A typed turn (`sendText`), on the same reply path as a spoken one (over the bot, it interrupts). */
function Say({ disabled, send }) {
  const [text, setText] = useState("");
  return h(
    "form",
    {
      className: "say",
      onSubmit: (e) => {
        e.preventDefault();
        if (!text.trim()) return;
        send(text.trim());
        setText("");
      },
    },
    h("input", { "data-testid": "say-text", "aria-label": "Type a message", placeholder: "Or type instead of speaking", autoComplete: "off", value: text, disabled, onChange: (e) => setText(e.target.value) }),
    h("button", { "data-testid": "say-send", type: "submit", disabled: disabled || !text.trim() }, "Send"),
  );
}

createRoot(document.getElementById("app")).render(h(StrictMode, null, h(App)));
