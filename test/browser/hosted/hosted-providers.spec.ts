/**
 * The four hosted-service providers (deepgramStt Nova and Flux, assemblyaiStt,
 * elevenlabsTts, cartesiaTts) in real VoiceSessions in Chromium: real
 * worklets, the Silero VAD worker, and each provider's wire protocol against
 * its emulator in the reference backend. Each STT provider is paired with the
 * reference Kyutai TTS and scripted LLM, each TTS provider with the reference
 * Kyutai STT and LLM, so a failure names one provider.
 *
 * Each provider gets a backend of its own, started here with an API key, and
 * a page of its own: the page's token functions ask for short-lived tokens
 * the documented browser way (this spec answers /api/deepgram-token as the
 * app's server would, with the key the page never sees), and the fault rows'
 * "nothing left open" checks read that backend's counters alone. The
 * providers run one after another (HOSTED_LANES=n runs n side by side: five
 * at once swamped this 2-core machine, the VAD did not load in 30 s), and one
 * test judges what each run recorded, a step per provider and check.
 * HOSTED_ONLY=deepgram-flux,cartesia runs only those providers.
 */
import { expect, test, type Browser, type Page } from "@playwright/test";
import { startReferenceBackend, type ReferenceBackend } from "../../../demo/server/backend.mjs";
// @ts-ignore: a plain ESM module shared with the pages and the reliability bench
import { HOSTED_PROVIDERS, REPLY_STALL_MS, casesFor, judgeCleanTurn, judgeReplyCase, judgeSttCase } from "../pages/faults/cases.js";
import { openPage } from "../open-page";

/** The backends' API key: held by this spec (the app's server), never put in a page. */
const API_KEY = "hosted-spec-key";
/** Onset of the user's speech → output silent, ms: the bound of bargein.spec.ts (a Silero frame or two, the MediaStream hop, the fade, slack). */
const SILENCE_BOUND_MS = 150;
/**
 * The deciding VAD frame's capture time → output silent, ms: the worker pauses playback in the
 * quantum after its decision, and the pause fades over at most 5 ms.
 */
const DECISION_TO_SILENCE_MS = 20;
/** The full turn's question, "Can you help me?". */
const QUESTION = ["can", "you", "help", "me"];

interface FaultCase {
  name: string;
  provider: string;
  service: "stt" | "tts";
  fault: string;
  expect: { error?: string; warning?: string; outcome: "starts-not" | "ends" | "continues" };
}
const PROVIDERS = Object.keys(HOSTED_PROVIDERS as Record<string, string>).filter((p) => !process.env.HOSTED_ONLY || process.env.HOSTED_ONLY.split(",").includes(p));

interface ProviderRun {
  conversation: Promise<any>;
  faults: Promise<any>;
  page: Page;
}
/**
 * How many providers run at once, each on its own backend and page (a
 * provider's own sessions always run one after another).
 */
const LANES = Number(process.env.HOSTED_LANES ?? 1);
const runs = new Map<string, Promise<ProviderRun>>();
const backends: ReferenceBackend[] = [];

/** The app's server: mints a Deepgram JWT with the key (POST /v1/auth/grant) for the page's token function. */
async function answerDeepgramTokens(page: Page, backend: ReferenceBackend) {
  await page.route("**/api/deepgram-token", async (route) => {
    const grant = await fetch(`${backend.url}/v1/auth/grant`, { method: "POST", headers: { Authorization: `Token ${API_KEY}` } });
    await route.fulfill({ status: grant.status, contentType: "application/json", body: await grant.text() });
  });
}

async function startRun(browser: Browser, name: string): Promise<ProviderRun> {
  const backend = await startReferenceBackend({ port: 0, token: API_KEY });
  backends.push(backend);
  const page = await (await browser.newContext()).newPage();
  await answerDeepgramTokens(page, backend);
  await openPage(page, `${backend.url}/test/browser/pages/hosted/hosted.html`, "hostedPageReady");
  const conversation = page.evaluate((n) => (window as any).hostedPage.runConversation(n), name);
  const faults = conversation
    .catch(() => undefined)
    .then(() => page.evaluate(({ n, cases, stallMs }) => (window as any).hostedPage.runFaults(n, cases, { turn: { replyStallMs: stallMs } }), { n: name, cases: casesFor(name), stallMs: REPLY_STALL_MS }));
  // The tests await these; a failure is reported there, not as an unhandled rejection here.
  conversation.catch(() => {});
  faults.catch(() => {});
  return { conversation, faults, page };
}

/** Starts every provider's run, LANES at a time. */
function startRuns(browser: Browser) {
  const lanes = Array.from({ length: LANES }, () => Promise.resolve());
  PROVIDERS.forEach((name, i) => {
    const run = lanes[i % LANES].then(() => startRun(browser, name));
    lanes[i % LANES] = run.then((r) => r.faults).then(() => {}, () => {});
    runs.set(name, run);
  });
}

test.afterAll(async () => {
  const started = await Promise.allSettled(runs.values());
  for (const s of started) {
    if (s.status !== "fulfilled") continue;
    await Promise.allSettled([s.value.conversation, s.value.faults]);
    await s.value.page.context().close();
  }
  for (const b of backends) await b.close();
});

/**
 * Every check is a step with soft assertions inside one test: a failed test
 * restarts Playwright's worker, and with it every provider's run, so each
 * provider's failures are reported in its own steps instead.
 */
test("the hosted providers in real sessions: a full turn, a barge-in, the reconnect path and the fault rows, for each", async ({ browser }) => {
  test.setTimeout(720_000);
  const startedAt = Date.now();
  startRuns(browser);
  for (const name of PROVIDERS) {
    const run = await runs.get(name)!;
    const service = (HOSTED_PROVIDERS as Record<string, string>)[name];
    const cases = casesFor(name) as FaultCase[];
    const conversation = await run.conversation.catch((err: Error) => ({ failed: err.message }));
    const faults = await run.faults.catch((err: Error) => ({ failed: err.message }));
    console.log(`${name}: conversation and fault rows done ${((Date.now() - startedAt) / 1000).toFixed(1)} s after the runs started; conversation phases (ms from start) ${JSON.stringify(conversation.phaseMs)}`);

    await test.step(`${name}: a full turn, the spoken question is the user's line, the reply plays, history holds both`, () => {
      expect.soft(conversation.failed, "the conversation ran").toBeUndefined();
      if (conversation.failed) return;
      judgeFullTurn(conversation);
    });
    await test.step(`${name}: a barge-in, silent within the bound, nothing stale, the heard words as played by the provider's timings`, () => {
      if (conversation.failed) return;
      judgeBargeIn(name, conversation);
    });
    await test.step(`${name}: the reconnect path (${service === "stt" ? "the stream drops mid-sentence; the session reconnects, the turn keeps its words, the next reply works" : "the socket drops mid-reply; the next reply connects anew and plays"})`, () => {
      expect.soft(faults.failed, "the fault rows ran").toBeUndefined();
      if (faults.failed) return;
      judgeReconnect(service, cases, faults);
    });
    await test.step(`${name}: fault rows (${cases.map((c) => c.fault).join(", ")}), each event names the service, the session goes on or ends cleanly, nothing left open`, async () => {
      if (faults.failed) return;
      expect.soft(judgeFaultRows(service, cases, faults)).toEqual([]);
      expect.soft(await run.page.evaluate(() => (window as any).cspViolations)).toEqual([]);
    });
  }
  console.log(`hosted providers: ${((Date.now() - startedAt) / 1000).toFixed(1)} s for every run`);
});

function judgeFullTurn(r: any) {
  const { history, turn, states } = r.firstTurn;
  expect.soft(r.errors).toEqual([]);
  expect.soft(history[0]?.role).toBe("user");
  const heard = String(history[0]?.text ?? "").toLowerCase().split(/\s+/);
  const said = `recognised "${history[0]?.text}"; warnings ${JSON.stringify(r.warnings)}`;
  for (const word of QUESTION) expect.soft(heard, said).toContain(word);
  expect.soft(history).toHaveLength(2);
  expect.soft(history[1]?.role).toBe("assistant");
  expect.soft(String(history[1]?.text).split(" ").length).toBeGreaterThan(3);
  expect.soft(history[1]?.interrupted).toBe(false);
  expect.soft(r.firstTurn.loudMs, "the reply's audio reached the output").toBeGreaterThan(1000);
  expect.soft(states.slice(0, 6)).toEqual(["connecting", "listening", "user_speaking", "bot_thinking", "bot_speaking", "listening"]);
  expect.soft(turn?.speechEndToFirstAudibleMs).toBeGreaterThan(0);
}

function judgeBargeIn(name: string, r: any) {
  const b = r.bargeIn;
  console.log(
    `${name} barge-in: silent ${b.silentAfterOnsetMs?.toFixed(1)} ms after the onset, ${b.silentAfterDecisionMs?.toFixed(1)} ms after the VAD's deciding frame (paused by the worker: ${b.decisionDirect}); played ${b.playedS.toFixed(3)} s = ${b.playedWords} words by the provider's timings, heard "${b.reply?.text}" (${b.heardWords} words); stale ${b.staleSamples}`,
  );
  expect.soft(b.audibleBeforeOnset, "the bot was audible before the onset").toBeGreaterThan(0.01);
  expect.soft(b.silentAfterOnsetMs, "the output went silent").not.toBeNull();
  expect.soft(b.silentAfterOnsetMs).toBeLessThan(SILENCE_BOUND_MS);
  expect.soft(b.decisionDirect, "the VAD worker paused playback itself").toBe(true);
  expect.soft(b.silentAfterDecisionMs, "silent within a render quantum (and the fade) of the deciding frame").toBeLessThanOrEqual(DECISION_TO_SILENCE_MS);
  expect.soft(b.staleSamples).toBe(0);
  expect.soft(b.reply?.interrupted).toBe(true);
  expect.soft(b.reply?.text).toBe(b.interruption?.heardText);
  expect.soft(`${b.reply?.text} ${b.reply?.unheardText}`.trim()).toBe(String(b.fullReply).trim().replace(/\s+/g, " "));
  expect.soft(b.timedWords.length, "the provider reported word timings past the cut").toBeGreaterThan(b.playedWords);
  expect.soft(b.playedWords).toBeGreaterThan(0);
  expect.soft(Math.abs(b.heardWords - b.playedWords), "heard words vs played words").toBeLessThanOrEqual(1);
  expect.soft(r.liveQuests).toEqual(["stt"]);
  expect.soft(r.errors).toEqual([]);
  expect.soft(r.unhandled).toEqual([]);
  expect.soft(r.stateAfterStop).toBe("idle");
  expect.soft(r.openSockets).toBe(0);
}

function judgeReconnect(service: string, cases: FaultCase[], f: any) {
  const drop = cases.find((c) => c.fault === "drop")!;
  const i = cases.indexOf(drop);
  if (service === "stt") {
    const r = f.results[i];
    expect.soft(r.failed, "the drop case ran").toBeUndefined();
    if (r.failed) return;
    console.log(`${drop.name}: ${JSON.stringify({ errors: r.seen.errors.map((e: any) => e.name), warnings: r.detail.warnings, history: r.history, replayedSamples: r.detail.replayedSamples })}`);
    expect.soft(judgeSttCase(drop, r)).toEqual([]);
    expect.soft(r.detail.warnings.some((w: string) => /reconnecting/.test(w)), "a reconnecting warning").toBe(true);
    return;
  }
  const users = f.clean.history.filter((m: any) => m.role === "user").map((m: any) => m.text);
  expect.soft(judgeReplyCase(drop, f.results[i], i, users)).toEqual([]);
  // The reply cut by the drop kept what played; the next one opened a new socket and was heard.
  const reply = f.results[i].history.filter((m: any) => m.role === "assistant").at(-1);
  expect.soft(reply?.interrupted).toBe(true);
  expect.soft(f.clean.turn?.speechEndToFirstAudibleMs, "the clean turn after the faults was heard").toBeGreaterThan(0);
}

function judgeFaultRows(service: string, cases: FaultCase[], f: any): string[] {
  const failures: string[] = [];
  if (service === "stt") {
    for (const [i, c] of cases.entries()) {
      const r = f.results[i];
      if (r.failed) {
        failures.push(r.failed);
        continue;
      }
      console.log(`${c.name}: ${r.ms} ms, ${JSON.stringify({ startError: r.startError, errors: r.seen.errors.map((e: any) => `${e.name}${e.fatal ? " (fatal)" : ""}`), warnings: r.seen.warnings.length, history: r.history })}`);
      failures.push(...judgeSttCase(c, r));
    }
    return failures;
  }
  const users = f.clean.history.filter((m: any) => m.role === "user").map((m: any) => m.text);
  for (const [i, c] of cases.entries()) {
    const r = f.results[i];
    console.log(`${c.name}: ${r.ms} ms, errors ${JSON.stringify(r.seen.errors.map((e: any) => e.name))}, warnings ${r.seen.warnings.length}, state ${r.state}`);
    failures.push(...judgeReplyCase(c, r, i, users));
  }
  failures.push(...judgeCleanTurn(f.clean, f.interruptions, cases));
  return failures;
}
