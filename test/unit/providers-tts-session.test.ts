/**
 * The heard-text cut with the hosted TTS providers: a real VoiceSession (on
 * bargein/testing's scripted audio parts, a scripted LLM and STT) speaks
 * through elevenlabsTts or cartesiaTts against the reference backend's
 * emulator (flite's speech over a real socket). The user hears 1.2 s and
 * talks over the bot; the history must keep exactly the words whose
 * midpoints the user heard, by the timings that provider reports.
 */
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { startReferenceBackend, type ReferenceBackend } from "../../demo/server/backend.mjs";
import { cartesiaTts } from "../../src/providers/cartesia-tts.js";
import { elevenlabsTts } from "../../src/providers/elevenlabs-tts.js";
import type { TtsEvent, TtsProvider } from "../../src/providers/types.js";
import { VoiceSession } from "../../src/session/voice-session.js";
import { fakeAudio } from "../../src/testing/fake-audio.js";
import { fakeLlm, fakeStt } from "../../src/testing/fake-providers.js";
import type { InterruptionEvent } from "../../src/session/types.js";

let backend: ReferenceBackend;
beforeAll(async () => {
  backend = await startReferenceBackend({ serveStatic: false, prewarm: false });
}, 60_000);
afterAll(() => backend?.close());

const REPLY = "Sure, the weather today is sunny and warm, with a light breeze from the west.";
const HEARD_MS = 1200;

const providers: Record<string, () => TtsProvider> = {
  elevenlabsTts: () => elevenlabsTts({ voiceId: "slt", url: `${backend.wsUrl}?pace=0` }),
  cartesiaTts: () => cartesiaTts({ voiceId: "slt", url: `${backend.wsUrl}?pace=0` }),
};

describe.each(Object.keys(providers))("%s in a session", (name) => {
  test("a barge-in after 1.2 s keeps exactly the words whose midpoints were heard", async () => {
    // The provider's own word timings for the reply, from a stream of its own (flite is deterministic).
    const probe = await providers[name]().connect();
    for (const w of REPLY.split(" ")) probe.sendText(w);
    probe.end();
    const timed: Extract<TtsEvent, { kind: "text" }>[] = [];
    for await (const e of probe.events()) if (e.kind === "text") timed.push(e);
    const expectedHeard = REPLY.split(" ").slice(0, timed.filter((w) => (w.startS + w.stopS) / 2 <= HEARD_MS / 1000).length);
    expect(expectedHeard.length).toBeGreaterThan(1);
    expect(expectedHeard.length).toBeLessThan(REPLY.split(" ").length - 2);

    const stt = fakeStt();
    const audio = fakeAudio({ stt });
    const session = new VoiceSession({ stt: stt.provider, llm: fakeLlm({ reply: () => REPLY }).provider, tts: providers[name](), components: audio.components });
    const interruptions: InterruptionEvent[] = [];
    session.on("interruption", (e) => interruptions.push(e));
    await session.start();
    await audio.user.says("what is the weather like today");
    await audio.player.play(HEARD_MS, { timeoutMs: 10_000 });
    await audio.user.says("thanks");
    expect(interruptions).toHaveLength(1);
    expect(interruptions[0].heardMs).toBe(HEARD_MS);
    console.log(`${name}: heard "${interruptions[0].heardText}" / unheard "${interruptions[0].unheardText}"`);
    expect(interruptions[0].heardText).toBe(expectedHeard.join(" "));
    const assistant = session.history.find((m) => m.role === "assistant");
    expect(assistant).toMatchObject({ text: expectedHeard.join(" "), interrupted: true });
    await session.stop();
    await expect.poll(() => backend.stats().tts.open).toBe(0);
  });
});
