/**
 * Devices mid-session on the real capture path: Chromium's fake devices
 * (--use-fake-device-for-media-stream lists several fake audio inputs, each
 * playing the same looping spoken question from --use-file-for-fake-audio-capture).
 * setInputDevice() moves the capture worklet to another input while the
 * session runs: it stays listening (no restart, no STT reconnect), the next
 * question is a turn, the swap's gap is measured, and getLevels() moves with
 * the speech.
 */
import { fileURLToPath } from "node:url";
import { expect, test } from "./backend-per-worker";
// @ts-ignore: plain ESM shared with the benchmarks
import { CHROMIUM_PATH, testChromiumArgs } from "../../scripts/chromium.mjs";
import { openSessionPage } from "./open-page";

/** weather-question.wav's first non-zero sample: 4441 of 16 kHz. */
const LEADING_ZEROS_MS = 277.6;
const wav = fileURLToPath(new URL("../fixtures/speech/weather-question.wav", import.meta.url));
test.use({ launchOptions: { executablePath: CHROMIUM_PATH, args: testChromiumArgs({ args: [`--use-file-for-fake-audio-capture=${wav}`] }) } });

test("setInputDevice() mid-session: still listening on the same STT stream, a question after the swap is a turn, the gap is measured; levels move with speech", async ({ page }) => {
  test.setTimeout(45_000);
  await openSessionPage(page);
  const r = await page.evaluate(async () => {
    const { makeSession, until } = (window as any).sessionPage;
    const t = await makeSession({ input: "microphone" });
    const swaps: any[] = [];
    const reconnects: any[] = [];
    t.session.on("inputDevice", (e: any) => swaps.push(e));
    t.session.on("reconnecting", (e: any) => reconnects.push(e));
    await t.session.start();
    const inputs = (await navigator.mediaDevices.enumerateDevices()).filter((d) => d.kind === "audioinput");
    const before = t.session.history.length;
    const from = t.session.metrics.uplink?.sentSamples ?? 0;
    const target = inputs.find((d) => d.deviceId !== "default" && d.deviceId !== (t.session as any).deviceId) ?? inputs.at(-1)!;
    const levelsDb: number[] = [];
    let binMax = 0;
    const cost = { plain: [] as number[], bins: [] as number[] };
    const meter = setInterval(() => {
      const withBins = levelsDb.length % 4 === 0;
      const t0 = performance.now();
      const levels = t.session.getLevels({ bins: withBins });
      (withBins ? cost.bins : cost.plain).push(performance.now() - t0);
      levelsDb.push(levels.input.rmsDb);
      if (levels.input.bins) binMax = Math.max(binMax, ...levels.input.bins);
    }, 50);
    await t.session.setInputDevice(target.deviceId);
    const stateAfterSwap = t.session.state;
    // The looping question, heard through the new device, becomes a user turn.
    // ...and the spectrum bins (read every 4th tick) have seen its speech: with the deterministic
    // recogniser the turn can come before a bins read fell in the speech. A turn may come first from
    // the question the old device was in the middle of at the swap (its tail: "like today", or "day"
    // alone under load): the new device's own question is the one with "weather" in it.
    const asked = (m: any) => m.role === "user" && /weather/.test(m.text);
    await until(() => t.session.history.slice(before).some(asked) && binMax > 0, 25000, "the question as a user turn after the swap, and speech in the bins");
    clearInterval(meter);
    const bins = t.session.getLevels({ bins: true });
    const loop = (withBins: boolean) => {
      const t0 = performance.now();
      for (let i = 0; i < 200; i++) t.session.getLevels({ bins: withBins });
      return ((performance.now() - t0) / 200) * 60;
    };
    const tight = { plain: loop(false), bins: loop(true) };
    // AudioContext.setSinkId: Chromium has it; "" is the default output.
    const outputError = await t.session.setOutputDevice("").then(() => null, (e: Error) => `${e.name}: ${e.message}`);
    const out = {
      inputs: inputs.map((d) => d.label),
      target: target.label,
      stateAfterSwap,
      swaps,
      reconnects,
      errors: t.log.errors,
      turnAfter: t.session.history.slice(before).find(asked)?.text,
      usersAfter: t.session.history.slice(before).filter((m: any) => m.role === "user").map((m: any) => m.text),
      sentSince: (t.session.metrics.uplink?.sentSamples ?? 0) - from,
      devices: t.session.metrics.devices,
      levelMaxDb: Math.max(...levelsDb),
      levelMinDb: Math.min(...levelsDb),
      binCount: bins.input.bins?.length,
      binMax,
      outputError,
      tight,
      // Main-thread ms per second if read at 60 fps (a figure for the report, not asserted).
      msPerSecondAt60: { plain: (60 * cost.plain.slice(1).reduce((a, b) => a + b, 0)) / Math.max(1, cost.plain.length - 1), bins: (60 * cost.bins.slice(1).reduce((a, b) => a + b, 0)) / Math.max(1, cost.bins.length - 1) },
    };
    await t.session.stop();
    return out;
  });
  console.log(`inputs ${JSON.stringify(r.inputs)} → ${r.target}; swap gap ${r.swaps[0]?.gapMs.toFixed(1)} ms (${(r.swaps[0]?.gapMs - LEADING_ZEROS_MS).toFixed(1)} ms against the file's leading zeros); input level ${r.levelMinDb.toFixed(1)}…${r.levelMaxDb.toFixed(1)} dBFS; turn "${r.turnAfter}" (user turns after the swap ${JSON.stringify(r.usersAfter)}); getLevels at 60 fps: ${r.msPerSecondAt60.plain.toFixed(3)} ms/s, with bins ${r.msPerSecondAt60.bins.toFixed(3)} ms/s (200 calls in a row: ${r.tight.plain.toFixed(3)} and ${r.tight.bins.toFixed(3)} ms/s)`);
  expect(r.inputs.length).toBeGreaterThanOrEqual(2);
  expect(r.errors).toEqual([]);
  expect(r.reconnects).toEqual([]);
  expect(["listening", "user_speaking", "bot_thinking", "bot_speaking"]).toContain(r.stateAfterSwap);
  expect(r.swaps).toHaveLength(1);
  // The fake device starts its file at getUserMedia, and the file opens with
  // 277.6 ms of digital zeros: the gap counts them (silence is all the capture
  // can tell from lost audio), less what the device played before the swap
  // took effect: the gap is the new device's zeros, not 0 and not the 1 s cap.
  // (How much of them played before the swap took effect depends on the load:
  // 161 ms of the 278 in a run with two CPU burners.)
  expect(r.swaps[0].gapMs).toBeGreaterThan(0);
  expect(r.swaps[0].gapMs).toBeLessThan(LEADING_ZEROS_MS + 200);
  expect(r.devices.inputSwaps).toBe(1);
  expect(r.devices.lastSwapGapMs).toBe(r.swaps[0].gapMs);
  expect(r.turnAfter).toMatch(/weather/);
  expect(r.sentSince).toBeGreaterThan(0);
  // The question's speech lifts the input well above its silence.
  expect(r.levelMaxDb).toBeGreaterThan(-45);
  expect(r.levelMaxDb - r.levelMinDb).toBeGreaterThan(15);
  expect(r.binCount).toBe(128);
  expect(r.outputError).toBeNull();
  expect(r.binMax).toBeGreaterThan(0);
});

test("a swap in the middle of the user's turn keeps the words said before it, in that turn", async ({ page }) => {
  test.setTimeout(45_000);
  await openSessionPage(page);
  const r = await page.evaluate(async () => {
    const { makeSession, until } = (window as any).sessionPage;
    const t = await makeSession({ input: "microphone" });
    // The user's message under way and its words, as the transcript events give them.
    let partial = { id: "", text: "" };
    const finals = new Map<string, string>();
    const events: string[] = [];
    t.session.on("transcript", (e: any) => {
      events.push(`${e.id} ${e.role} ${e.final ? "final" : e.revised ? "revised" : "partial"} "${e.text}" @${t.session.state}`);
      if (e.role !== "user") return;
      if (e.final || e.revised) finals.set(e.id, e.text);
      else partial = { id: e.id, text: e.text };
    });
    t.session.on("state", (e: any) => events.push(`state ${e.state}`));
    await t.session.start();
    const inputs = (await navigator.mediaDevices.enumerateDevices()).filter((d) => d.kind === "audioinput" && d.deviceId !== "default");
    // The fake device loops the question, from wherever its file was when capture began: the first turn may be
    // its tail alone ("today"), answered, and the question then said over the reply. The swap comes once a
    // message has two words and the VAD's speech; that message is the one checked, by its id.
    // (Under CI's load the STT once had two words before the VAD's speech start.)
    await until(() => partial.text.split(/\s+/).filter(Boolean).length >= 2 && t.session.state === "user_speaking", 20000, "two words of the question, in the user's speech").catch((e: Error) => {
      throw new Error(`${e.message}: partial "${partial.text}", state ${t.session.state}, states ${t.log.states.join(" ")}, vad ${JSON.stringify(t.log.vadEvents)}`);
    });
    const before = { ...partial };
    events.push("swap");
    const stateAtSwap = t.session.state;
    await t.session.setInputDevice(inputs.at(-1)!.deviceId);
    await until(() => finals.has(before.id), 25000, "the final of the user's message under way at the swap").catch((e: Error) => {
      throw new Error(`${e.message}: ${events.join("; ")}`);
    });
    const out = { before: before.text, stateAtSwap, turn: finals.get(before.id)!, errors: t.log.errors, swaps: t.session.metrics.devices.inputSwaps, events };
    await t.session.stop();
    return out;
  });
  console.log(`before the swap "${r.before}" (${r.stateAtSwap}); the turn "${r.turn}"`);
  expect(r.errors).toEqual([]);
  expect(r.swaps).toBe(1);
  expect(r.stateAtSwap).toBe("user_speaking");
  // Every word heard before the swap is in the turn, in order, at its start.
  expect(r.turn.startsWith(r.before), `the session's events:\n  ${r.events.join("\n  ")}`).toBe(true);
});
