// A component on bargein/react's useVoiceSession, mounted under <StrictMode>
// with React's own act() and createRoot, on a real session: the browser's
// components (capture and playback worklets, VAD worker, getUserMedia) and the
// reference backend's providers. Bundled by the spec (scripts/react-pages.mjs)
// into ./build/: React from node_modules, the SDK from /dist/ at run time.
import { StrictMode, act, createElement as h, useEffect } from "react";
import { createRoot } from "react-dom/client";
import { useVoiceSession } from "bargein/react";
import { referenceProvider } from "../session/reference-providers.js";
import { sleep } from "../../../lib/wait.mjs";

globalThis.IS_REACT_ACT_ENVIRONMENT = true;

const OPTIONS = {
  stt: referenceProvider("stt"),
  tts: referenceProvider("tts"),
  llm: referenceProvider("sse"),
  assetsPath: "/dist/",
  autoStart: true,
};

/** What the test reads besides the DOM: the last render's hook result and the states rendered. */
const seen = { renders: 0, states: [], result: undefined };

function Conversation() {
  const voice = useVoiceSession(OPTIONS);
  seen.renders++;
  seen.result = voice;
  if (seen.states.at(-1) !== voice.state) seen.states.push(voice.state);
  const { session, mute } = voice;
  // The fake microphone loops its question: once the turn is the bot's, mute,
  // so that the next loop does not talk over the reply and it plays out whole.
  useEffect(() => session.on("state", (e) => e.state === "bot_thinking" && mute()), [session, mute]);
  return h(
    "main",
    null,
    h("p", { "data-testid": "state" }, voice.state),
    h(
      "ol",
      { "data-testid": "history" },
      voice.history.map((m) => h("li", { key: m.id, "data-role": m.role, "data-id": m.id }, m.text)),
    ),
  );
}

let root;

/** The rendered DOM, as data. */
function dom() {
  const el = document.getElementById("root");
  return {
    state: el.querySelector('[data-testid="state"]')?.textContent,
    rows: [...el.querySelectorAll('[data-testid="history"] li')].map((li) => ({ id: li.dataset.id, role: li.dataset.role, text: li.textContent })),
    html: el.innerHTML,
  };
}

/**
 * Waits for `cond` in short act() scopes, so that every update the session
 * causes meanwhile is React's to flush inside act (none lands outside one).
 */
async function waitFor(cond, ms, what) {
  const end = performance.now() + ms;
  while (!cond()) {
    if (performance.now() > end) throw new Error(`timed out (${ms} ms) waiting for ${what}; states rendered: ${seen.states.join(" → ")}; DOM: ${JSON.stringify(dom().rows)}`);
    await act(() => sleep(25));
  }
}

window.reactPage = {
  sleep,
  seen,
  dom,
  waitFor,
  /** Lets `ms` pass inside act(). */
  settle: (ms) => act(() => sleep(ms)),
  async mount() {
    root = createRoot(document.getElementById("root"));
    await act(async () => root.render(h(StrictMode, null, h(Conversation))));
  },
  async unmount() {
    await act(async () => root.unmount());
  },
  /** The hook's history (heard text), as plain data. */
  history: () => JSON.parse(JSON.stringify(seen.result?.history ?? [])),
};
window.reactPageReady = true;
