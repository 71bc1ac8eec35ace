/**
 * The session's `progress` event: the components factory reports the VAD's
 * load (the real one forwards the worker's byte counts: test/browser/
 * session.spec.ts), and the app sees it while the session is connecting.
 */
import { expect, test } from "vitest";
import { VoiceSession, type LoadProgressEvent, type SessionState } from "../../src/index.js";
import { fakeAudio, fakeLlm, fakeStt, fakeTts } from "../../src/testing/index.js";

test("load progress from the components factory reaches the app as `progress` events, during `connecting`", async () => {
  const stt = fakeStt();
  const audio = fakeAudio({ stt });
  const seen: Array<LoadProgressEvent & { state: SessionState }> = [];
  const session = new VoiceSession({
    stt: stt.provider,
    llm: fakeLlm().provider,
    tts: fakeTts().provider,
    components: async (context) => {
      for (const loaded of [0, 1_000_000, 2_327_524]) context.onProgress?.({ asset: "model", url: "/dist/silero_vad_v5.onnx", loaded, total: 2_327_524 });
      return audio.components(context);
    },
  });
  session.on("progress", (e) => seen.push({ ...e, state: session.state }));
  await session.start();
  expect(seen.map((e) => [e.asset, e.loaded, e.total, e.state])).toEqual([
    ["model", 0, 2_327_524, "connecting"],
    ["model", 1_000_000, 2_327_524, "connecting"],
    ["model", 2_327_524, 2_327_524, "connecting"],
  ]);
  await session.stop();
});
