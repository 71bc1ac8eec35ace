/**
 * `geminiLive` in Chromium on the real parts (capture and playback worklets,
 * the Silero VAD worker) against the reference backend's Gemini Live
 * emulator (BidiGenerateContentConstrained with an ephemeral token), with
 * client activity detection: a question, a reply that the user talks over,
 * and a reply heard to its end. The user's speech goes in through `input` and
 * the output is recorded in the same AudioContext (pages/session/), so the
 * silence and stale audio are read from real samples. Gemini has no
 * truncate: the emulator's /__gemini/log shows the note of the heard words
 * that the client sent instead, and that the service kept what it had sent.
 */
import { expect, test } from "./backend-per-worker";
import { SILENCE_BOUND_MS } from "./sanity-bounds";
// @ts-ignore: a plain ESM module shared with the pages that judge a barge-in
import { loudMs, readCut, timeline } from "./pages/session/output-analysis.js";
import { openSessionPage } from "./open-page";

// The emulator sends its audio at real time (`pace=1`; 1.5x by default). At 1.5x the 6.4 s reply was all
// sent by the time a loaded machine's barge-in reached it (its log said "completed", 2 runs of 3 under two
// burners), and this test is about a turn the server is still generating.
const CONSTRAINED = "/ws/google.ai.generativelanguage.v1alpha.GenerativeService.BidiGenerateContentConstrained?pace=1";

test("a Gemini Live conversation: the replies are heard, a barge-in goes silent with nothing stale, and the model is told the heard words", async ({ page, request }) => {
  // Two spoken turns and a barge-in, each waited on: under two CPU burners they took over 60 s.
  test.setTimeout(120_000);
  await openSessionPage(page);
  const r = await page.evaluate(async (path) => {
    const { makeSession, until } = (window as any).sessionPage;
    const { geminiLive } = await import("/dist/bargein.js" as string);
    const token = async () => (await (await fetch("/api/token?service=gemini-live")).json()).token;
    const realtime = geminiLive({ url: `ws://${location.host}${path}`, model: "models/gemini-live-2.5-flash-preview", token });
    const t = await makeSession({ sessionOptions: { stt: undefined, llm: undefined, tts: undefined, realtime, bargeIn: { minSpeechMs: 200 } }, recordSeconds: 40 });
    const wait = (cond: () => boolean, ms: number) =>
      until(cond, ms, String(cond)).catch(async (e: Error) => {
        const service = (await (await fetch("/__gemini/log")).json()).sessions?.at(-1);
        throw new Error(`${e.message}: ${JSON.stringify({ states: t.log.states, errors: t.log.errors, warnings: t.log.warnings, vad: t.log.vad, history: t.session.history, service })}`);
      });
    await t.session.start();
    // Fetched and decoded now: said after whenBotLoud, a fetch on a loaded machine let the bot reach a
    // pause first (CI: 0.006 peak in the 300 ms before the onset).
    await t.preload("help-me");
    await t.say("weather-question");
    await wait(() => t.session.state === "bot_speaking", 30000);
    await new Promise((res) => setTimeout(res, 1500 + Math.random() * 1000));
    // Over the bot's voice, not in a pause between its phrases (about 1 moment in 12 fell in one).
    await t.whenBotLoud();
    const second = await t.say("help-me", { fromOnset: true });
    await wait(() => t.log.interruptions.length === 1, 10000);
    const speechEnd = second.startedAt + second.meta.offsetSamples / second.meta.sampleRate - second.offset;
    await wait(() => t.session.history.length === 4 && t.session.state === "listening", 30000);
    const rec = await t.recording();
    const history = JSON.parse(JSON.stringify(t.session.history));
    await t.session.stop();
    return {
      sampleRate: t.context.sampleRate,
      startFrame: rec.startFrame,
      flushes: t.flushes,
      gaps: rec.gaps,
      missed: rec.missed,
      samples: Array.from(rec.samples as Float32Array),
      onset: second.onset,
      speechEnd,
      history,
      log: t.log,
    };
  }, CONSTRAINED);
  const { samples, sampleRate } = r;
  const line = timeline(r, sampleRate);
  const onsetAt = line.index(r.onset);
  const quietUntil = line.index(r.speechEnd + 0.3);
  // Silent for good: after the last sound up to past the user's speech (its first silent 10 ms can be a gap between the bot's words).
  const cut = readCut(r, line, r.flushes, sampleRate, onsetAt, quietUntil);
  expect(cut.audibleBefore, "the bot was audible before the onset").toBeGreaterThan(0.01);
  expect(cut.silentAfterMs, `the bot's output went on this long after the onset; ${cut.said}`).toBeLessThan(SILENCE_BOUND_MS);
  // Nothing of the cut reply after its flush, to past the user's speech.
  expect(cut.flushed.at, "the player was never flushed").toBeGreaterThanOrEqual(0);
  expect(cut.flushed.loud, `samples of the cut reply after its flush at ${(((cut.flushed.at - onsetAt) / sampleRate) * 1000).toFixed(1)} ms; ${cut.said}`).toBe(0);

  const log = (await (await request.get("/__gemini/log")).json()).sessions.at(-1);
  const [question, cutReply, user2, reply2] = r.history;
  console.log(`gemini barge-in: silent ${cut.silentAfterMs.toFixed(1)} ms after the onset (${cut.said}); heard "${cutReply.text}"; note ${JSON.stringify(log.clientContents.map((c: any) => c.turns[0].text))}`);
  expect(question).toMatchObject({ role: "user" });
  expect(question.text).toContain("weather");
  const fullReply = "I cannot look outside, but I hope it is pleasant where you are. Are you planning to go out today?";
  expect(cutReply).toMatchObject({ role: "assistant", interrupted: true });
  expect(fullReply.startsWith(cutReply.text)).toBe(true);
  expect(cutReply.text.length).toBeLessThan(fullReply.length);
  // Gemini cannot truncate: the client tells the model what was heard, in a note that asks no reply.
  expect(log.clientContents).toHaveLength(1);
  expect(log.clientContents[0].turnComplete).toBe(false);
  expect(log.clientContents[0].turns[0].text).toContain(`"${cutReply.text}"`);
  expect(log.turns[0].status).toBe("interrupted");
  expect(user2.role).toBe("user");
  expect(reply2).toMatchObject({ role: "assistant", interrupted: false });
  expect(reply2.text.split(" ").length).toBeGreaterThan(3);
  expect(loudMs(samples, sampleRate, quietUntil)).toBeGreaterThan(1000);
  expect(r.log.errors).toEqual([]);
});
