/**
 * Barge-in in Chromium on the real parts, against the reference backend: the
 * user's speech is injected through `input` and the bot's output is recorded
 * in the same AudioContext, so silence and stale audio are measured in samples.
 */
import { expect, test } from "@playwright/test";

/** Onset of the user's speech → output silent, in ms. Generous for a shared 2-core machine; the bench measures it. */
const SILENCE_BOUND_MS = 250;

test("talking over the bot silences it within the bound, plays nothing stale, cancels LLM and TTS, and keeps the heard words", async ({ page, request }) => {
  await page.goto("/test/browser/pages/session/session.html");
  await page.waitForFunction(() => (window as any).sessionPageReady);
  const before = await (await request.get("/__stats")).json();
  const r = await page.evaluate(async () => {
    const { makeSession, until } = (window as any).sessionPage;
    const t = await makeSession({ llm: "sse" });
    await t.session.start();
    await t.say("weather-question");
    await until(() => t.session.state === "bot_speaking", 30000);
    await new Promise((res) => setTimeout(res, 900));
    const fullReply = t.session.history[1].text;
    const second = await t.say("stop-please");
    await until(() => t.log.interruptions.length === 1, 10000);
    const interruption = t.log.interruptions[0];
    const speechEnd = second.startedAt + second.meta.offsetSamples / second.meta.sampleRate;
    // Wait past the user's speech so the recording covers it.
    await until(() => t.context.currentTime > speechEnd + 0.3, 10000);
    const rec = await t.recording();
    const history = JSON.parse(JSON.stringify(t.session.history));
    const liveQuests = t.session.liveQuests;
    await t.session.stop();
    return {
      sampleRate: t.context.sampleRate,
      outputLatency: t.context.outputLatency || t.context.baseLatency || 0,
      startFrame: rec.startFrame,
      gaps: rec.gaps,
      samples: Array.from(rec.samples as Float32Array),
      onset: second.startedAt + second.meta.onsetSamples / second.meta.sampleRate,
      speechEnd,
      interruption,
      history,
      fullReply,
      liveQuests,
      log: t.log,
    };
  });
  const { samples, sampleRate } = r;
  const index = (t: number) => Math.round(t * sampleRate) - r.startFrame;
  // Quanta the render thread skipped leave zeros at their place; there should be few.
  expect(r.gaps).toBeLessThan(5);
  // Last audible bot sample after the onset, before the user's turn could get a reply.
  const onsetAt = index(r.onset);
  const quietUntil = index(r.speechEnd + 0.3);
  let lastLoud = -1;
  for (let i = onsetAt; i < quietUntil; i++) if (Math.abs(samples[i]) > 1e-3) lastLoud = i;
  const silentAfterMs = ((lastLoud - onsetAt) / sampleRate) * 1000;
  console.log(`barge-in: output silent ${silentAfterMs.toFixed(1)} ms after the onset`);
  expect(lastLoud, "the bot was still audible at the onset").toBeGreaterThan(onsetAt - sampleRate * 0.05);
  expect(silentAfterMs).toBeLessThan(SILENCE_BOUND_MS);
  // Nothing of the cancelled turn after the fence: silence all the way to the end of the user's speech.
  const stale = samples.slice(lastLoud + 1, quietUntil).filter((x) => Math.abs(x) > 1e-4).length;
  expect(stale).toBe(0);

  // History keeps exactly the heard words: a prefix of the reply; the rest is unheard; nothing lost.
  const reply = r.history[1];
  expect(reply.interrupted).toBe(true);
  expect(reply.text).toBe(r.interruption.heardText);
  expect(`${reply.text} ${reply.unheardText}`.trim()).toBe(r.fullReply.trim().replace(/\s+/g, " "));
  expect(reply.text.split(" ").length).toBeGreaterThan(0);
  // heardMs matches the bot audio actually rendered (first loud sample → last loud sample) less the output latency.
  let firstLoud = 0;
  while (firstLoud < samples.length && Math.abs(samples[firstLoud]) < 1e-3) firstLoud++;
  const renderedMs = ((lastLoud - firstLoud) / sampleRate) * 1000;
  expect(Math.abs(r.interruption.heardMs - (renderedMs - r.outputLatency * 1000))).toBeLessThan(80);
  expect(r.liveQuests).toEqual(["stt"]);
  expect(r.log.errors).toEqual([]);

  // The server saw the TTS socket closed by the client and the LLM request end.
  const after = await (await request.get("/__stats")).json();
  expect(after.tts.closedByClient - before.tts.closedByClient).toBeGreaterThanOrEqual(1);
  expect(after.llm.requestsEnded + after.llm.requestsAborted - before.llm.requestsEnded - before.llm.requestsAborted).toBeGreaterThanOrEqual(1);
  expect(after.tts.open).toBe(0);
  expect(after.llm.active).toBe(0);
});

test("a burst shorter than minSpeechMs during bot speech pauses and resumes playback, losing nothing and cancelling nothing", async ({ page, request }) => {
  await page.goto("/test/browser/pages/session/session.html");
  await page.waitForFunction(() => (window as any).sessionPageReady);
  const before = await (await request.get("/__stats")).json();
  const r = await page.evaluate(async () => {
    const { makeSession, until } = (window as any).sessionPage;
    const t = await makeSession({ llm: "sse", sessionOptions: { bargeIn: { minSpeechMs: 300 } } });
    await t.session.start();
    await t.say("weather-question");
    await until(() => t.session.state === "bot_speaking", 30000);
    await new Promise((res) => setTimeout(res, 600));
    const burst = await t.say("help-me", { offset: 0.3, duration: 0.15 });
    await until(() => t.log.vad.includes("misfire"), 10000);
    await until(() => t.session.state === "listening", 30000);
    const history = JSON.parse(JSON.stringify(t.session.history));
    await t.session.stop();
    return { history, log: t.log, burst: burst.startedAt };
  });
  expect(r.log.vad).toContain("speechStart");
  expect(r.log.interruptions).toEqual([]);
  expect(r.log.errors).toEqual([]);
  expect(r.history[1].interrupted).toBe(false);
  expect(r.history[1].unheardText).toBe("");
  const after = await (await request.get("/__stats")).json();
  // The TTS finished on its own: completed, not closed early by the client.
  expect(after.tts.completed - before.tts.completed).toBe(1);
  expect(after.tts.closedByClient - before.tts.closedByClient).toBe(0);
});
