/**
 * Backchannels in Chromium (`bargeIn.backchannels`, src/session/backchannel.ts),
 * on the real parts: the worklets, the Silero worker and the reference backend,
 * whose STT (pocketsphinx) hears flite's "okay" and "wait a moment" as those
 * words (its "yeah" came back as "you have", and a softer one misfired). A backchannel said over the bot pauses it and lets it go on: no
 * interruption, no user turn, and the reply plays to its end. A short real
 * interruption ("wait") still interrupts, confirmed by its word.
 */
import { expect, test, type Page } from "./backend-per-worker";
import { SILENCE_BOUND_MS } from "./sanity-bounds";
import { openSessionPage } from "./open-page";

/**
 * A session with backchannels on, 1.5 s into its first reply and the bot loud: `window.replying`. (As in
 * echo-barge-in.spec.ts, 1.5 s in, the echo guard passes the mic through; there is no echo here. 0.7 s in, an
 * "okay" once gave the VAD no speech start at all, 1 run in 3: to look into, issue #14.)
 */
async function replying(page: Page, backchannels: object | true = true): Promise<void> {
  await openSessionPage(page);
  await page.evaluate(async (backchannels) => {
    const { makeSession, until } = (window as any).sessionPage;
    const t = await makeSession({ llm: "sse", sessionOptions: { bargeIn: { backchannels } } });
    await t.session.start();
    await t.say("weather-question");
    await until(() => t.session.state === "bot_speaking", 30000, "the reply");
    // Fetched and decoded now, so that a word said after whenBotLoud starts at once.
    await Promise.all(["okay", "wait"].map((name) => t.preload(name)));
    await new Promise((res) => setTimeout(res, 1500));
    await t.whenBotLoud();
    (window as any).replying = t;
  }, backchannels);
}

test("with bargeIn.backchannels, \"okay\" said over the bot pauses it and lets it go on: no interruption, no user turn, the whole reply heard", async ({ page }) => {
  // The word is what tells a backchannel here, so it is given 3 s to come: on a loaded machine the STT's
  // "okay" came after the default 700 ms wait (the bot still went on, as for a hum, with no words). How
  // fast the default decides is the turn bench's business.
  // What this test checks is what the session does with a backchannel the VAD heard as speech. Silero's own
  // call on a word this short is not: on a starved machine it once started 350 ms into the word and called it
  // a misfire (the bot then rightly went on, as for a hum, and no backchannel was decided). Such a try is
  // logged and made again on a fresh session, at most twice.
  test.setTimeout(240_000);
  const misfires: string[] = [];
  let r: any;
  for (let attempt = 0; attempt < 3 && !r; attempt++) {
    await replying(page, { wordWaitMs: 3000 });
    const out = await page.evaluate(async () => {
      const { until } = (window as any).sessionPage;
      const t = (window as any).replying;
      // The VAD's events for the "okay" alone (the question before it had its own real start).
      const from = t.log.vadEvents.length;
      const said = await t.say("okay", { fromOnset: true });
      const since = () => t.log.vadEvents.slice(from);
      const misfired = () => since().some((e: any) => e.kind === "misfire") && !since().some((e: any) => e.kind === "speechRealStart");
      await until(() => t.log.backchannels.length === 1 || t.log.interruptions.length > 0 || misfired(), 10000, 'the backchannel "okay"').catch((e: Error) => {
        throw new Error(`${e.message}: vad ${JSON.stringify(t.log.vadEvents.slice(-8))}, states ${t.log.states.join(" ")}, transcripts ${JSON.stringify(t.log.transcripts)}, state ${t.session.state}, said at ${said.onset}, now ${t.context.currentTime}`);
      });
      if (t.log.backchannels.length === 0 && t.log.interruptions.length === 0) {
        const vad = JSON.stringify(t.log.vadEvents.slice(-6));
        await t.session.stop();
        return { misfire: `said at ${said.onset}: vad ${vad}` };
      }
      await until(() => t.session.state === "listening", 30000, "the reply's end");
      const rec = await t.recording();
      const history = JSON.parse(JSON.stringify(t.session.history));
      await t.session.stop();
      return { samples: Array.from(rec.samples as Float32Array), startFrame: rec.startFrame, sampleRate: t.context.sampleRate, onset: said.onset, history, log: t.log };
    });
    if ("misfire" in out) misfires.push(out.misfire as string);
    else r = out;
  }
  if (misfires.length) console.log(`"okay" called a misfire by the VAD, said again on a fresh session: ${misfires.join("; ")}`);
  if (!r) throw new Error(`the VAD called each of 3 "okay"s a misfire: ${misfires.join("; ")}`);
  const { samples, sampleRate } = r;
  console.log(`backchannels ${JSON.stringify(r.log.backchannels)}; interruptions ${JSON.stringify(r.log.interruptions)}; history ${JSON.stringify(r.history.map((m: any) => `${m.role}: ${m.text}`))}`);
  expect(r.log.interruptions, "a backchannel interrupted the bot").toEqual([]);
  expect(r.log.backchannels.map((b: any) => b.words.join(" "))).toEqual(["okay"]);
  for (const b of r.log.backchannels) expect(b.speechMs).toBeLessThan(700);
  // One user turn (the question) and one reply, heard whole.
  expect(r.history.map((m: any) => m.role)).toEqual(["user", "assistant"]);
  expect(r.history[1].interrupted).toBe(false);
  expect(r.log.errors).toEqual([]);
  // The backchannel paused the bot (10 ms of silence within the sanity bound of its onset), and the bot played on after it.
  const index = (time: number) => Math.round(time * sampleRate) - r.startFrame;
  const from = index(r.onset);
  let quiet = 0;
  let pausedAt = -1;
  for (let i = from; i < from + Math.round((SILENCE_BOUND_MS / 1000) * sampleRate); i++) {
    quiet = Math.abs(samples[i]!) < 1e-4 ? quiet + 1 : 0;
    if (quiet === Math.round(0.01 * sampleRate)) {
      pausedAt = i;
      break;
    }
  }
  expect(pausedAt, `no pause within ${SILENCE_BOUND_MS} ms of the onset at ${r.onset}`).toBeGreaterThan(0);
  const after = samples.slice(from + Math.round(0.5 * sampleRate), from + Math.round(3 * sampleRate));
  expect(Math.max(...after.map(Math.abs)), "the bot did not play on after the backchannel").toBeGreaterThan(0.01);
});

test("with bargeIn.backchannels, \"wait a moment\" over the bot still interrupts, confirmed by its word, and is the user's turn", async ({ page }) => {
  // "Wait a moment" is voiced 770 ms, past the default maxMs (700): when the STT's "wait" comes after the
  // VAD's end (CI's load once made it so), that length confirms it instead, with reason "speech". The word
  // is what this test is about, so the length rule is put out of reach and the word given 3 s to come.
  await replying(page, { maxMs: 2000, wordWaitMs: 3000 });
  const r = await page.evaluate(async () => {
    const { until } = (window as any).sessionPage;
    const t = (window as any).replying;
    await t.say("wait", { fromOnset: true });
    await until(() => t.log.interruptions.length === 1, 10000, "the interruption").catch((e: Error) => {
      throw new Error(`${e.message}: backchannels ${JSON.stringify(t.log.backchannels)}, transcripts ${JSON.stringify(t.log.transcripts)}, state ${t.session.state}`);
    });
    await until(() => t.session.history.length >= 3, 20000, "the turn");
    const history = JSON.parse(JSON.stringify(t.session.history));
    await t.session.stop();
    return { history, log: t.log };
  });
  console.log(`wait: ${JSON.stringify(r.log.interruptions[0])}; history ${JSON.stringify(r.history.map((m: any) => `${m.role}: ${m.text}`))}`);
  expect(r.log.interruptions[0].reason).toBe("words");
  expect(r.log.backchannels).toEqual([]);
  expect(r.history[1]).toMatchObject({ role: "assistant", interrupted: true });
  expect(r.history[2].role).toBe("user");
  expect(r.history[2].text.toLowerCase().split(/\s+/)).toContain("wait");
  expect(r.log.errors).toEqual([]);
});
