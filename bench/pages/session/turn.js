// `npm run bench -- turn`, the page side: whole turns with known speech.
// Each fixture is spoken into the injected mic; the session replies through
// the reference backend; the reply is recorded in the same AudioContext. Per
// turn it returns the session's TurnMetrics and, independently from the
// recording, when the reply became audible relative to the fixture's
// labelled end of speech (context time, sample-exact).
import { makeBenchSession, sessionDetail, until, windowView } from "./bench-session.js";

/** Louder than this is "loud" for the first audible sample (-40 dBFS; flite's leading breath is below it). */
const LOUD = 0.01;

async function run({ fixtures, gapMs = 400, provider = "kyutai" }) {
  const t = await makeBenchSession({ provider });
  await t.session.start();
  const sampleRate = t.context.sampleRate;
  const outputLatency = (t.context.outputLatency ?? 0) + (t.context.baseLatency ?? 0);
  const turns = [];
  const phantoms = [];
  /** `until`, whose timeout says where the session was. */
  const waitFor = (cond, ms, what) => until(cond, ms, what).catch((err) => Promise.reject(new Error(`${err.message} (${sessionDetail(t)})`, { cause: err })));
  try {
    for (const name of fixtures) {
      await waitFor(() => t.session.state === "listening", 30000, "listening");
      await new Promise((r) => setTimeout(r, gapMs));
      let seen = t.log.turns.length;
      const spoken = await t.say(name);
      // The turn that answers this fixture: its session-side speech end falls
      // after the fixture's onset. An earlier one is a phantom turn (late STT
      // words of the previous utterance, see the report) and is set aside.
      let metrics, tts, speechEndAt;
      for (;;) {
        await waitFor(() => t.log.turns.length > seen, 45000, `the turn after ${name}`);
        metrics = t.log.turns[seen++];
        // One TTS stream per reply, in order: reply n's is ttsStreams[n - 1].
        tts = t.ttsStreams[metrics.turn - 1];
        speechEndAt = tts?.firstAudioAt !== undefined ? tts.firstAudioAt - metrics.speechEndToFirstAudioByteMs : undefined;
        if (speechEndAt !== undefined && t.clock.contextTimeAt(speechEndAt) > spoken.onset) break;
        phantoms.push({ before: name, turn: metrics.turn, userText: t.session.history.filter((m) => m.role === "user").at(-1)?.text, interrupted: metrics.interrupted });
      }
      await waitFor(() => t.session.state === "listening", 30000, "listening after the reply");
      const rec = await t.recording(spoken.speechEnd - 0.05, t.context.currentTime);
      const view = windowView(rec, sampleRate);
      const firstLoud = view.firstLoud(view.index(spoken.speechEnd), view.length, LOUD);
      const firstLoudTime = firstLoud >= 0 ? view.timeOf(firstLoud) : NaN;
      // The reply's first sample: its first loud sample less where that sits in the TTS audio.
      const firstSampleTime = firstLoudTime - (tts.firstLoudS ?? 0);
      // The session's own instants, mapped to context time. Its "speech end" is
      // when it decided the turn was over; the TTS wrapper saw the first audio
      // byte at the same instant the session did.
      const sdkSpeechEndTime = t.clock.contextTimeAt(speechEndAt);
      const sdkAudibleTime = t.clock.contextTimeAt(speechEndAt + metrics.speechEndToFirstAudibleMs);
      const history = t.session.history;
      turns.push({
        fixture: name,
        heard: history[history.length - 2]?.text,
        reply: history[history.length - 1]?.text,
        metrics,
        recorded: {
          speechEndToFirstLoudMs: (firstLoudTime - spoken.speechEnd) * 1000,
          speechEndToFirstSampleMs: (firstSampleTime - spoken.speechEnd) * 1000,
          firstAudioByteToFirstSampleMs: (firstSampleTime - tts.firstAudioContextTime) * 1000,
          unknownQuanta: view.unknownQuanta(0, view.length),
        },
        sdkSpeechEndLagMs: (sdkSpeechEndTime - spoken.speechEnd) * 1000,
        // SDK's audible instant (rendered + output latency) − the recorded render of the reply's first sample.
        audibleAgreementMs: (sdkAudibleTime - firstSampleTime) * 1000,
        // What the user felt, from the recording: labelled end of speech → the reply's first sample heard.
        voiceToVoiceTruthMs: (firstSampleTime + outputLatency - spoken.speechEnd) * 1000,
      });
    }
  } finally {
    await t.close();
  }
  return { sampleRate, outputLatency, turns, phantoms, errors: t.log.errors, warnings: t.log.warnings, csp: window.cspViolations };
}

window.bench = { run };
window.benchReady = true;
