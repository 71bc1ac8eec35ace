/**
 * Open speakers in Chromium: the bot's output comes back into the mic through
 * a seeded room (test/browser/pages/echo/echo-path.js: delay, loudspeaker
 * nonlinearity, a decaying-noise impulse response, gain), with no browser
 * echo canceller (the mic is a MediaStream of the page). On the real parts:
 * worklets, the Silero worker, the reference backend.
 *
 * The suite runs 6 replies (about a minute); the issue's 30 and the grid of
 * gains, delays and rooms belong in a bench.
 */
import { expect, test } from "./backend-per-worker";
import { openSessionPage } from "./open-page";

const ECHO = { delayMs: 60, rt60: 0.3, gainDb: -6, seed: 7 };
const REPLIES = 6;
const PHRASES: Record<string, string> = { "help-me": "can you help me", wait: "wait a moment", "turn-on-lights": "please turn on the lights", "weather-question": "what is the weather like today" };
/**
 * The questions, in turn. Each is one stretch of speech: "Stop, please stop." was one, but its first
 * "Stop," alone is short enough for the VAD to call a misfire right after a reply, and the echo guard
 * then takes its word for the bot's echo (as it should: the VAD did not vouch for it), which split the
 * question under load. That rule is the turn machine's own (test/unit/turn-machine.test.ts: held words dropped as echo on the misfire).
 */
const QUESTIONS = ["help-me", "wait", "turn-on-lights", "weather-question"];

test("self-interruption: over 6 replies with the bot's echo at −6 dB and no browser canceller, the bot never interrupts itself", async ({ page }) => {
  test.setTimeout(300_000);
  await openSessionPage(page);
  const r = await page.evaluate(async ({ echo, replies, questions }) => {
    const { makeSession, until } = (window as any).sessionPage;
    const t = await makeSession({ llm: "sse", echo, recordSeconds: 5, sessionOptions: { echoGuard: { enabled: true } } });
    await t.session.start();
    const phrases = questions;
    for (let i = 0; i < replies; i++) {
      const turns = t.log.turns.length;
      await t.say(phrases[i % phrases.length]);
      await until(() => t.log.turns.length > turns, 40000, `turn ${i + 1}`).catch((e: Error) => {
        throw new Error(`${e.message}: state ${t.session.state}; states ${t.log.states.slice(-12).join(" ")}; vad ${JSON.stringify(t.log.vadEvents.slice(-10))}; transcripts ${JSON.stringify(t.log.transcripts)}; warnings ${JSON.stringify(t.log.warnings)}; history ${JSON.stringify(t.session.history.map((m: any) => `${m.role}: ${m.text}`))}`);
      });
      await until(() => t.session.state === "listening" || t.session.state === "user_speaking", 20000, `listening after turn ${i + 1}`);
      // Let the STT's lag and the echo's tail pass before the next question.
      await new Promise((res) => setTimeout(res, 300));
    }
    const metrics = t.session.metrics;
    const history = JSON.parse(JSON.stringify(t.session.history));
    await t.session.stop();
    return { log: t.log, history, metrics };
  }, { echo: ECHO, replies: REPLIES, questions: QUESTIONS });
  const replies = r.history.filter((m: any) => m.role === "assistant");
  const users = r.history.filter((m: any) => m.role === "user").map((m: any) => m.text);
  console.log(
    `echo ${JSON.stringify(r.log.echoPath)}: ${replies.length} replies, ${r.log.interruptions.length} interruptions, ` +
      `${r.log.vad.filter((k: string) => k === "misfire").length} misfires, echo ${JSON.stringify(r.metrics.echo)}; user turns ${JSON.stringify(users)}`,
  );
  expect(replies.length).toBe(REPLIES);
  expect(r.log.interruptions).toEqual([]);
  // Every reply played to its end: none is cut, nothing is left unheard.
  expect(replies.filter((m: any) => m.interrupted || m.unheardText)).toEqual([]);
  // The bot's own words never became a user turn: one user message per question.
  expect(users).toHaveLength(REPLIES);
  // Each holds its question (echo words heard after the user began may lead it).
  expect(users.filter((text: string, i: number) => !text.endsWith(PHRASES[QUESTIONS[i % QUESTIONS.length]!]!))).toEqual([]);
  expect(r.log.errors).toEqual([]);
  expect(r.metrics.echo.converged).toBe(true);
});
