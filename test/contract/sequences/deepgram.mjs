// Deepgram sequences, written from the docs, replayed against the emulator
// (test/contract/deepgram.test.ts) and the live service (scripts/check-live.mjs):
//   https://developers.deepgram.com/docs/flux/configure                    (Configure → ConfigureSuccess / ConfigureFailure)
//   https://developers.deepgram.com/reference/speech-to-text/listen-flux   (eot_threshold 0.5–0.9, eager_eot_threshold 0.3–0.9)
//   https://developers.deepgram.com/docs/close-stream                      (CloseStream: the final Results, then Metadata, then the close)
import { readFileSync } from "node:fs";
import { readWav } from "../../../demo/server/wav.mjs";
import { ContractSocket, check, inOrder, typesOf } from "./socket.mjs";

/** @typedef {{ base: string, auth: { protocols?: string[], headers?: Record<string, string> } }} DeepgramTarget  base: "wss://host" */

/** "Can you help me?" as 16 kHz s16 (test/fixtures/speech). */
export function helpMe() {
  return readWav(readFileSync(new URL("../../fixtures/speech/help-me.wav", import.meta.url))).samples;
}

/** @param {DeepgramTarget} target */
async function flux(target) {
  const s = new ContractSocket(`${target.base}/v2/listen?model=flux-general-en&encoding=linear16&sample_rate=16000`, target.auth);
  await s.opened;
  await s.until((m) => m.some((x) => x.type === "Connected"), "Connected");
  return s;
}

export const deepgramSequences = {
  /** Flux: a Configure within the documented ranges is answered with ConfigureSuccess. */
  async "a Configure (Flux)"(/** @type {DeepgramTarget} */ target) {
    const s = await flux(target);
    try {
      s.send({ type: "Configure", thresholds: { eot_threshold: 0.8, eot_timeout_ms: 6000 }, keyterms: ["bargein"] });
      await s.until((m) => m.some((x) => x.type === "ConfigureSuccess" || x.type === "ConfigureFailure" || x.type === "Error"), "ConfigureSuccess or ConfigureFailure");
      const types = typesOf(s.messages);
      return { messages: s.messages, checks: [check("a valid Configure is answered with ConfigureSuccess", types.includes("ConfigureSuccess"), types)] };
    } finally {
      s.close();
    }
  },

  /** Flux: a Configure outside the documented ranges is answered with ConfigureFailure, and the stream lives on. */
  async "a Configure refused (Flux)"(/** @type {DeepgramTarget} */ target) {
    const s = await flux(target);
    try {
      s.send({ type: "Configure", thresholds: { eot_threshold: 2 } });
      await s.until((m) => m.some((x) => x.type === "ConfigureSuccess" || x.type === "ConfigureFailure" || x.type === "Error") || s.closeInfo !== null, "ConfigureSuccess or ConfigureFailure");
      const types = typesOf(s.messages);
      return {
        messages: s.messages,
        checks: [
          check("an eot_threshold of 2 is answered with ConfigureFailure", types.includes("ConfigureFailure"), types),
          check("the stream stays open", s.closeInfo === null, s.closeInfo),
        ],
      };
    } finally {
      s.close();
    }
  },

  /** Nova: CloseStream after speech: the final Results, then Metadata, then the server closes with 1000. */
  async "the close handshake (Nova)"(/** @type {DeepgramTarget} */ target) {
    const s = new ContractSocket(`${target.base}/v1/listen?model=nova-3&encoding=linear16&sample_rate=16000&interim_results=true`, target.auth);
    await s.opened;
    const samples = helpMe();
    for (let i = 0; i < samples.length; i += 1280) s.send(Buffer.from(samples.slice(i, i + 1280).buffer));
    s.send({ type: "CloseStream" });
    const info = await s.closed();
    const types = typesOf(s.messages);
    const finals = s.messages.filter((m) => m.type === "Results" && m.is_final === true);
    const words = finals.flatMap((m) => m.channel?.alternatives?.[0]?.words ?? []).map((w) => w.word);
    return {
      messages: s.messages,
      checks: [
        check("final Results with the speech's words", words.length > 0, words),
        check("Metadata after the last Results", inOrder(types, ["Results", "Metadata"]) && types.lastIndexOf("Results") < types.indexOf("Metadata"), types),
        check("the server closes with 1000 after Metadata", info.code === 1000, info),
      ],
    };
  },
};
