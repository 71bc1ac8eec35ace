// Security checks on real sessions: tokens only from token functions, the
// microphone released on stop, on error and on page hide.
import { kyutaiStt, kyutaiTts, openaiChat } from "/dist/bargein.js";
import { makeSession, until } from "../session/session.js";
import { sleep } from "/test/lib/wait.mjs";

const ws = `ws://${location.host}`;

/** The app's token function: a short-lived token from the page's own server, which holds the secret. */
async function fetchToken() {
  const response = await fetch("/api/token", { cache: "no-store" });
  return (await response.json()).token;
}

function providers({ token, sttQuery = "" } = {}) {
  const auth = token ? { token: fetchToken } : {};
  return {
    stt: kyutaiStt({ urls: `${ws}/${sttQuery ? `?${sttQuery}` : ""}`, startupTimeoutMs: 3000, ...auth }),
    tts: kyutaiTts({ urls: ws, voice: "slt", ...auth }),
    llm: openaiChat({ url: `${location.origin}/v1`, model: "eliza", ...auth }),
  };
}

/** A full conversation turn: speech in, a reply spoken, then stop. */
export async function conversation({ token }) {
  const t = await makeSession({ sessionOptions: providers({ token }) });
  await t.session.start();
  await t.say("weather-question");
  // This checks where the token goes, not speed: the untimed project runs beside the consumer
  // build, and one CI run needed more than 30 s for this turn. A timeout says where it stood.
  await until(() => t.log.turns.length > 0, 60000).catch((e) => {
    throw new Error(`${e.message}: ${JSON.stringify({ states: t.log.states, vad: t.log.vad, transcripts: t.log.transcripts, errors: t.log.errors, warnings: t.log.warnings })}`);
  });
  const history = JSON.parse(JSON.stringify(t.session.history));
  await t.session.stop();
  return { history, log: t.log, turn: t.log.turns[0], csp: window.cspViolations, unhandled: window.unhandled };
}

/** start() without a token on a server that wants one: it must fail, and say so without leaking anything. */
export async function startFails({ token, sttQuery }) {
  const t = await makeSession({ sessionOptions: providers({ token, sttQuery }) });
  try {
    await t.session.start();
    await t.session.stop();
    return { started: true };
  } catch (err) {
    return { started: false, name: err.name, message: err.message, url: err.url ?? "", cause: String(err.cause?.message ?? ""), state: t.session.state, log: t.log };
  }
}

const trackStates = () => window.micStreams.flatMap((s) => s.getAudioTracks().map((track) => track.readyState));

/** Hides the page as a browser does when the tab goes to the background. */
function hidePage(how) {
  if (how === "pagehide") {
    window.dispatchEvent(new PageTransitionEvent("pagehide", { persisted: false }));
  } else {
    // Headless Chromium never hides a page by itself: report "hidden" as a background tab would.
    Object.defineProperty(document, "visibilityState", { configurable: true, get: () => "hidden" });
    Object.defineProperty(document, "hidden", { configurable: true, get: () => true });
    document.dispatchEvent(new Event("visibilitychange"));
  }
}

/**
 * Opens the real microphone (getUserMedia; Chromium's fake device), runs the
 * session to `how` ("stop", "start-error", "fatal", "track-ended",
 * "context-suspended", "context-closed", "visibilitychange", "pagehide",
 * "hidden-opt-out"), and reports the mic track's readyState.
 */
export async function micRelease(how) {
  window.micStreams.length = 0;
  const sessionOptions = providers({ sttQuery: how === "start-error" ? "capacity=0" : how === "fatal" ? "malformed=1" : "" });
  if (how === "hidden-opt-out") sessionOptions.releaseMicOnHide = false;
  const t = await makeSession({ input: "device", sessionOptions });
  const result = { how };
  try {
    await t.session.start();
    result.whileRunning = trackStates();
    if (how === "stop") await t.session.stop();
    if (how === "fatal") await until(() => t.session.state === "idle", 15000);
    if (how === "context-suspended" || how === "context-closed") {
      // The app's own context (makeSession passes one in), suspended or closed under the session.
      await (how === "context-closed" ? t.context.close() : t.context.suspend());
      await until(() => (how === "context-closed" ? t.session.state === "idle" : t.log.warnings.length > 0), 3000);
    }
    if (how === "track-ended") {
      // A page cannot unplug the fake device, and track.stop() fires no "ended":
      // the browser's own event is dispatched as it would be on unplug or revoke.
      for (const s of window.micStreams) for (const track of s.getAudioTracks()) track.dispatchEvent(new Event("ended"));
      await until(() => t.session.state === "idle", 3000);
    }
    if (how === "visibilitychange" || how === "pagehide" || how === "hidden-opt-out") {
      hidePage(how === "pagehide" ? "pagehide" : "visibilitychange");
      await until(() => t.session.state === "idle", 3000).catch(() => {});
    }
  } catch (err) {
    result.startError = err.name;
  }
  await sleep(100);
  result.state = t.session.state;
  result.afterward = trackStates();
  result.errors = t.log.errors;
  result.warnings = t.log.warnings;
  await t.session.stop();
  return result;
}

window.securityPage = { conversation, startFails, micRelease };
window.securityPageReady = true;
