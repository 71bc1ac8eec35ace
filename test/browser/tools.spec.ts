/**
 * Client tool calls in Chromium, on the real parts (worklets, the Silero VAD
 * worker, the reference backend's STT, LLM and TTS): the reference LLM asks the
 * page for the time (its scripted get_time), the page's handler answers, and the
 * reply that says it is heard at the output; and speech over a slow tool
 * aborts the handler's signal, with nothing sent for it.
 */
import { expect, test } from "./backend-per-worker";
import { openSessionPage } from "./open-page";

const GET_TIME = { name: "get_time", description: "The time now, where the user is.", parameters: { type: "object", properties: {} } };

for (const llm of ["sse", "ws"] as const) {
  test(`a tool call round trip (${llm}): the model asks the page for the time, and the reply that says it is heard`, async ({ page }) => {
    test.setTimeout(90_000);
    await openSessionPage(page);
    const r = await page.evaluate(
      async ({ llm, GET_TIME }) => {
        const { makeSession, until, windowsRms } = (window as any).sessionPage;
        const t = await makeSession({ llm, sessionOptions: { tools: { definitions: [GET_TIME] } } });
        const events: unknown[] = [];
        t.session.on("toolCall", (e: unknown) => events.push(e));
        t.session.on("toolResult", (e: unknown) => events.push(e));
        const time = new Date().toLocaleTimeString("en-US", { hour: "numeric", minute: "2-digit" });
        const states: string[] = [];
        t.session.handleTool("get_time", async () => {
          states.push(t.session.state);
          return time;
        });
        await t.session.start();
        t.session.sendText("what time is it");
        await until(() => t.log.turns.length >= 1, 40000, "the reply's turn report");
        await until(() => t.session.state === "listening", 30000, "the end of the reply");
        const rec = await t.recording();
        const history = JSON.parse(JSON.stringify(t.session.history));
        await t.session.stop();
        const rms = windowsRms(rec.samples, Math.round(t.context.sampleRate * 0.02));
        return { time, states, events, history, errors: t.log.errors, warnings: t.log.warnings, loudWindows: rms.filter((v: number) => v > 0.01).length };
      },
      { llm, GET_TIME },
    );
    expect(r.errors).toEqual([]);
    expect(r.warnings).toEqual([]);
    expect(r.states).toEqual(["bot_thinking"]);
    expect(r.events).toMatchObject([
      { messageId: "a2", call: { name: "get_time", arguments: {} } },
      { messageId: "a2", name: "get_time", status: "ok", output: r.time },
    ]);
    expect(r.history[1]).toMatchObject({
      role: "assistant",
      text: `It is ${r.time}.`,
      interrupted: false,
      toolCalls: [{ name: "get_time", status: "ok", output: r.time }],
    });
    // flite spoke it: at least half a second of output above -40 dBFS.
    expect(r.loudWindows).toBeGreaterThan(25);
  });
}

test("speech during a slow tool aborts the handler's signal; nothing is said for the call, and the speech is the next turn", async ({ page }) => {
  test.setTimeout(120_000);
  await openSessionPage(page);
  const r = await page.evaluate(async (GET_TIME) => {
    const { makeSession, until } = (window as any).sessionPage;
    const t = await makeSession({ sessionOptions: { tools: { definitions: [GET_TIME] } } });
    const results: any[] = [];
    t.session.on("toolResult", (e: unknown) => results.push(e));
    let started = false;
    let abortedAt: number | undefined;
    t.session.handleTool("get_time", (_call: unknown, { signal }: { signal: AbortSignal }) => {
      started = true;
      signal.addEventListener("abort", () => (abortedAt = performance.now()));
      // A slow tool that would answer after 20 s, long after the user spoke.
      return new Promise((resolve) => setTimeout(() => resolve("too late"), 20_000));
    });
    await t.session.start();
    t.session.sendText("what time is it");
    await until(() => started, 30000, "the tool call");
    const stateDuringTool = t.session.state;
    const spoke = await t.say("stop-please");
    await until(() => abortedAt !== undefined, 30000, "the handler's abort");
    const spokeAt = performance.now();
    await until(() => t.log.transcripts.filter((l: string) => l.startsWith("user:")).length >= 2, 30000, "the spoken turn");
    await until(() => t.log.turns.length >= 2 && t.session.state === "listening", 40000, "the reply to the spoken turn");
    const history = JSON.parse(JSON.stringify(t.session.history));
    await t.session.stop();
    return { stateDuringTool, results, history, interruptions: t.log.interruptions, errors: t.log.errors, spokeDuration: spoke.duration, spokeAt };
  }, GET_TIME);
  expect(r.errors).toEqual([]);
  expect(r.stateDuringTool).toBe("bot_thinking");
  expect(r.interruptions).toHaveLength(1);
  expect(r.interruptions[0]).toMatchObject({ reason: expect.stringMatching(/speech|words/), heardText: "" });
  expect(r.results).toMatchObject([{ name: "get_time", status: "cancelled" }]);
  expect(r.results[0].output).toBeUndefined();
  expect(r.history[0].text).toBe("what time is it");
  expect(r.history[1]).toMatchObject({ role: "assistant", text: "", interrupted: true, toolCalls: [{ status: "cancelled" }] });
  expect(r.history[1].toolCalls[0].output).toBeUndefined();
  expect(r.history[2]).toMatchObject({ role: "user", text: expect.stringMatching(/stop|please/) });
  // The next reply answered the speech, not the tool: no "It is too late."
  expect(r.history[3].text).not.toMatch(/too late/);
});
