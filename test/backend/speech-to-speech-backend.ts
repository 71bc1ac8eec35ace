// One reference backend per test file for the speech-to-speech session tests (realtime-session*,
// gemini-session*), in a process of its own (test/lib/backend-process.ts): started in beforeAll with the file's API key, stopped in afterAll, with the rig
// and the emulator's log on it. Call it at the file's top level.
import { afterAll, beforeAll } from "vitest";
import { startBackendProcess, type BackendProcess } from "../lib/backend-process.js";
import { speechToSpeechRig, type RigOptions, type SpeechToSpeech } from "./speech-to-speech-rig.js";

/** Each emulator's log of its sessions (GET), which the tests read the last entry of. */
const LOG_PATH: Record<SpeechToSpeech, string> = { openai: "/__realtime/log", gemini: "/__gemini/log" };

/**
 * `defaultToken(backend)`: the token function a session gets unless a test gives its own.
 * Returns `rig` (one session on the emulator, test/backend/speech-to-speech-rig.ts, with the fakes; the
 * mic streams silence until `say`; `token`: the session's token function; `query`: fault knobs on the
 * socket's URL; `provider`: the provider's other options), `lastSession` (the emulator's log of its
 * newest session) and `backend()`.
 */
export function useSpeechToSpeechBackend(kind: SpeechToSpeech, key: string, defaultToken: (backend: BackendProcess) => () => Promise<string>) {
  let backend: BackendProcess;

  beforeAll(async () => {
    backend = await startBackendProcess({ token: key });
  }, 60_000);
  afterAll(() => backend?.close());

  function rig(session: RigOptions["session"] = {}, token: () => Promise<string> = defaultToken(backend), { query = "", ...provider }: { query?: string; turnDetection?: string } = {}) {
    const r = speechToSpeechRig(backend, kind, key, { session, token, knobs: query.replace(/^\?/, ""), provider });
    return { ...r, errors: r.seen.errors };
  }

  async function lastSession(): Promise<any> {
    const { sessions } = await (await fetch(`${backend.url}${LOG_PATH[kind]}`)).json();
    return sessions.at(-1);
  }

  return { rig, lastSession, backend: () => backend };
}
