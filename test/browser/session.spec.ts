/**
 * VoiceSession end to end in Chromium: real capture and playback worklets, the
 * Silero VAD worker, and the four real wire protocols against the reference
 * backend (pocketsphinx STT, flite TTS, the scripted LLM).
 */
import { expect, test } from "@playwright/test";

const QUESTION = "what is the weather like today".split(" ");

test.describe("a full turn with known speech injected through `input`", () => {
  for (const llm of ["sse", "ws"]) {
    test(`the transcript holds the question, the reply is spoken and recorded at the output (LLM over ${llm})`, async ({ page }) => {
      await page.goto("/test/browser/pages/session/session.html");
      await page.waitForFunction(() => (window as any).sessionPageReady);
      const result = await page.evaluate(async (llm) => {
        const { makeSession, until, windowsRms } = (window as any).sessionPage;
        const t = await makeSession({ llm });
        await t.session.start();
        const afterStart = t.session.state;
        const { startedAt } = await t.say("weather-question");
        await until(() => t.log.turns.length >= 1, 40000);
        await until(() => t.session.state === "listening", 20000);
        const rec = await t.recording();
        // Where the bot's audio sits in the recording (the input is not routed to the output).
        const rms = windowsRms(rec.samples, 480);
        const loudWindows = rms.filter((r: number) => r > 0.01).length;
        const history = JSON.parse(JSON.stringify(t.session.history));
        const liveQuests = t.session.liveQuests;
        await t.session.stop();
        return { afterStart, history, log: t.log, loudMs: loudWindows * (480 / t.context.sampleRate) * 1000, liveQuests, startedAt, finalState: t.session.state };
      }, llm);
      expect(result.afterStart).toBe("listening");
      expect(result.log.errors).toEqual([]);
      const user = result.history[0];
      expect(user.role).toBe("user");
      const heard = user.text.toLowerCase().split(/\s+/);
      // pocketsphinx sometimes hears the short function words "what is" as "but as"
      // (it depends on where the 80 ms frames fall); the content words always come through.
      const hits = QUESTION.filter((w) => heard.includes(w)).length;
      expect(hits, `recognised "${user.text}"`).toBeGreaterThanOrEqual(4);
      const said = `recognised "${user.text}"; transcripts ${JSON.stringify(result.log.transcripts)}; warnings ${JSON.stringify(result.log.warnings)}`;
      for (const word of ["weather", "like", "today"]) expect(heard, said).toContain(word);
      const reply = result.history[1];
      expect(reply.role).toBe("assistant");
      expect(reply.text.split(" ").length).toBeGreaterThan(3);
      expect(reply.interrupted).toBe(false);
      // The reply's audio reached the output: at least ~1 s of it above -40 dBFS.
      expect(result.loudMs).toBeGreaterThan(1000);
      expect(result.log.states.slice(0, 6)).toEqual(["connecting", "listening", "user_speaking", "bot_thinking", "bot_speaking", "listening"]);
      const turn = result.log.turns[0];
      for (const key of ["speechEndToSttFinalMs", "speechEndToFirstTokenMs", "speechEndToFirstAudioByteMs", "speechEndToFirstAudibleMs", "firstAudioByteToAudibleMs"]) {
        expect(turn[key], key).toBeGreaterThan(0);
      }
      expect(turn.speechEndToFirstAudibleMs).toBeGreaterThan(turn.speechEndToFirstAudioByteMs);
      // Voice to voice, from the VAD's last speech frame: its first part is the VAD's wait for silence, which
      // cannot end before 18 frames (576 ms of the session's 600 ms redemption) after that frame.
      expect(turn.voiceToVoiceMs).toBeGreaterThan(turn.speechEndToFirstAudibleMs);
      expect(turn.voiceEndToDecisionMs).toBeGreaterThan(550);
      // start() reported the VAD's load in bytes, while connecting, to the end of each file.
      for (const asset of ["model", "wasm"]) {
        const p = result.log.progress[asset];
        expect(p, asset).toMatchObject({ state: "connecting" });
        expect(p.loaded, asset).toBe(p.total);
      }
      expect(result.log.progress.model.loaded).toBe(2327524); // silero_vad_v5.onnx
      expect(result.log.progress.wasm.loaded).toBe(14239897); // ort-wasm-simd-threaded.wasm
      expect(result.liveQuests).toEqual(["stt"]);
      expect(result.finalState).toBe("idle");
    });
  }
});

