// AssemblyAI Universal-Streaming v3 sequences, written from the docs, replayed against the emulator
// (test/contract/assemblyai.test.ts) and the live service (scripts/check-live.mjs):
//   https://www.assemblyai.com/docs/api-reference/streaming-api/streaming-api
//   https://www.assemblyai.com/docs/streaming/universal-streaming/message-sequence (Begin … Termination, then the close)
import { ContractSocket, check, typesOf } from "./socket.mjs";
import { helpMe } from "./deepgram.mjs";

/** @typedef {{ base: string, auth: { protocols?: string[], headers?: Record<string, string> } }} AssemblyaiTarget  base: "wss://host" */

export const assemblyaiSequences = {
  /** Speech, then Terminate: the turn's words, Termination, then the server closes with 1000. */
  async "the close handshake"(/** @type {AssemblyaiTarget} */ target) {
    const s = new ContractSocket(`${target.base}/v3/ws?sample_rate=16000&encoding=pcm_s16le`, target.auth);
    await s.opened;
    await s.until((m) => m.some((x) => x.type === "Begin"), "Begin");
    // The speech and 1 s of silence, in 100 ms frames (the docs take 50–1000 ms each).
    const speech = helpMe();
    const samples = new Int16Array(Math.ceil((speech.length + 16000) / 1600) * 1600);
    samples.set(speech);
    for (let i = 0; i < samples.length; i += 1600) s.send(Buffer.from(samples.slice(i, i + 1600).buffer));
    s.send({ type: "Terminate" });
    const info = await s.closed();
    const types = typesOf(s.messages);
    const termination = s.messages.find((m) => m.type === "Termination") ?? {};
    return {
      messages: s.messages,
      checks: [
        check("Begin first, Termination last", types[0] === "Begin" && types.at(-1) === "Termination", types.filter((t, i) => t !== types[i - 1])),
        check("Termination has audio_duration_seconds and session_duration_seconds", typeof termination.audio_duration_seconds === "number" && typeof termination.session_duration_seconds === "number", termination),
        check("a Turn with words before Termination", s.messages.some((m) => m.type === "Turn" && (m.words ?? []).length > 0), types),
        check("the server closes with 1000", info.code === 1000, info),
      ],
    };
  },
};
