// The speech state machine on scripted probabilities: the same rules as
// vad-web's FrameProcessor, with every event naming the frame that caused it.
import { describe, expect, it } from "vitest";
import { SpeechDetector, type SpeechEvent } from "../../src/vad/speech-detector.js";
import { DEFAULT_SPEECH_OPTIONS, resolveVadOptions } from "../../src/vad/vad-options.js";
import { ConfigError } from "../../src/errors.js";
import { DOUBLE_TALK_THRESHOLD, PAUSE_LAPSE_MS, type FrameEcho } from "../../src/protocol/frames.js";

const FRAME = 512;

/** Runs probabilities through a detector; frame i holds the value i in every sample. */
function run(probabilities: number[], options: Partial<typeof DEFAULT_SPEECH_OPTIONS> = {}, keepAudio = true) {
  const detector = new SpeechDetector({ ...DEFAULT_SPEECH_OPTIONS, ...options, msPerFrame: 32, keepAudio });
  const events: SpeechEvent[] = [];
  probabilities.forEach((p, i) => {
    const frame = new Float32Array(FRAME).fill(i);
    events.push(...detector.push(frame, p, { sampleIndex: i * FRAME, contextTime: (i * FRAME) / 16000 }));
  });
  return { detector, events };
}

const frames = (n: number, p: number) => Array<number>(n).fill(p);
const summary = (events: SpeechEvent[]) => events.map((e) => `${e.kind}@${e.at.sampleIndex / FRAME}`);

describe("SpeechDetector", () => {
  it("the echo guard's verdict: echo frames start nothing; unconfirmed ones may start speech but never reach a real start", () => {
    const detector = new SpeechDetector({ ...DEFAULT_SPEECH_OPTIONS, msPerFrame: 32, keepAudio: false });
    const events: SpeechEvent[] = [];
    let i = 0;
    const feed = (p: number, echo: FrameEcho) => {
      events.push(...detector.push(new Float32Array(FRAME), p, { sampleIndex: i++ * FRAME, contextTime: 0 }, echo));
    };
    for (let k = 0; k < 30; k++) feed(0.9, "echo"); // 960 ms of loud echo: past minSpeechMs (400)
    expect(events).toEqual([]);
    for (let k = 0; k < 30; k++) feed(0.9, "unconfirmed");
    for (let k = 0; k < 50; k++) feed(0.05, "clear");
    expect(events.map((e) => e.kind)).toEqual(["speechStart", "pauseLapse", "misfire"]);
    // Trusted near-end speech over the echo still confirms.
    events.length = 0;
    for (let k = 0; k < 5; k++) feed(0.9, "unconfirmed");
    for (let k = 0; k < 13; k++) feed(0.9, "clear");
    expect(events.map((e) => e.kind)).toEqual(["speechStart", "speechRealStart"]);
  });

  it("speechEnd names the utterance's last speech frame, redemptionMs before the end itself (voiceToVoiceMs starts there)", () => {
    // Speech, a dip between words (its frames count toward redemption, then speech resets it), speech, then silence.
    const probabilities = [...frames(3, 0), ...frames(15, 0.9), ...frames(3, 0.2), ...frames(4, 0.8), ...frames(45, 0.05)];
    const { events } = run(probabilities);
    const end = events.find((e) => e.kind === "speechEnd");
    expect(end && end.kind === "speechEnd" && end.lastSpeech).toEqual({ sampleIndex: 24 * FRAME, contextTime: (24 * FRAME) / 16000 });
    expect(end!.at.sampleIndex / FRAME - 24).toBe(Math.floor(DEFAULT_SPEECH_OPTIONS.redemptionMs / 32));
  });

  it("double talk (trusted near-end speech over the bot): weak speech pauses but never confirms; sure speech confirms", () => {
    const detector = new SpeechDetector({ ...DEFAULT_SPEECH_OPTIONS, msPerFrame: 32, keepAudio: false });
    const events: SpeechEvent[] = [];
    let i = 0;
    const feed = (p: number, echo: FrameEcho) => events.push(...detector.push(new Float32Array(FRAME), p, { sampleIndex: i++ * FRAME, contextTime: 0 }, echo));
    // The echo's residual holding the gate open: Silero gave it 0.25–0.46 in Chromium (frames.ts).
    for (let k = 0; k < 30; k++) feed(DOUBLE_TALK_THRESHOLD - 0.15, "doubleTalk");
    for (let k = 0; k < 50; k++) feed(0.05, "echo");
    expect(events.map((e) => e.kind)).toEqual(["speechStart", "pauseLapse", "misfire"]);
    // A person talking over the bot.
    events.length = 0;
    for (let k = 0; k < 13; k++) feed(0.95, "doubleTalk");
    expect(events.map((e) => e.kind)).toEqual(["speechStart", "speechRealStart"]);
  });

  it("a pause for speech nothing vouches for lapses after PAUSE_LAPSE_MS of quiet and renews on its next voiced frame; the utterance goes on", () => {
    const detector = new SpeechDetector({ ...DEFAULT_SPEECH_OPTIONS, redemptionMs: 600, minSpeechMs: 224, msPerFrame: 32, keepAudio: false });
    const events: SpeechEvent[] = [];
    let i = 0;
    const feed = (n: number, p: number, echo: FrameEcho) => {
      for (let k = 0; k < n; k++) events.push(...detector.push(new Float32Array(FRAME), p, { sampleIndex: i++ * FRAME, contextTime: 0 }, echo));
    };
    const lapseFrames = PAUSE_LAPSE_MS / 32;
    // The bot's residual echo: a burst the guard cannot vouch for, then its quiet.
    feed(3, 0.5, "unconfirmed");
    feed(lapseFrames - 1, 0.05, "echo");
    expect(summary(events)).toEqual(["speechStart@0"]);
    feed(1, 0.05, "echo");
    expect(summary(events)).toEqual(["speechStart@0", `pauseLapse@${3 + lapseFrames - 1}`]);
    expect(events[1]).toMatchObject({ lapsed: true });
    // Another burst in the same utterance renews the pause at its first frame, and lapses again.
    feed(2, 0.4, "doubleTalk");
    feed(lapseFrames, 0.05, "echo");
    expect(events.slice(2).map((e) => e.kind === "pauseLapse" && e.lapsed)).toEqual([false, true]);
    expect(events[2].at.sampleIndex / FRAME).toBe(3 + lapseFrames);
    // Nothing counted, so the utterance still ends as a misfire after the whole redemption.
    feed(20, 0.05, "echo");
    expect(events.at(-1)!.kind).toBe("misfire");
    // The user: once a frame has counted, quiet does not lapse the pause (a word gap), and the barge-in confirms.
    events.length = 0;
    feed(2, 0.5, "unconfirmed");
    feed(1, 0.9, "doubleTalk");
    feed(lapseFrames + 2, 0.05, "clear");
    feed(7, 0.9, "clear");
    expect(events.map((e) => e.kind)).toEqual(["speechStart", "speechRealStart"]);
    // Without the bot (clear frames count from the first), no pause ever lapses.
    events.length = 0;
    feed(30, 0.05, "clear");
    feed(3, 0.9, "clear");
    feed(10, 0.05, "clear");
    expect(events.map((e) => e.kind)).toEqual(["speechEnd", "speechStart"]);
  });

  it("starts speech on the first frame at or above positiveSpeechThreshold", () => {
    const { events } = run([...frames(5, 0.1), 0.29, 0.3, 0.9]);
    expect(summary(events)).toEqual(["speechStart@6"]);
    expect(events[0]).toMatchObject({ probability: 0.3, at: { sampleIndex: 6 * FRAME, contextTime: (6 * FRAME) / 16000 } });
  });

  it("fires speechRealStart on the frame that completes minSpeechMs of speech frames", () => {
    // 400 ms / 32 ms = 12 frames (floor, as vad-web).
    const { events } = run([...frames(3, 0), ...frames(20, 0.9)]);
    expect(summary(events)).toEqual(["speechStart@3", "speechRealStart@14"]);
  });

  it("ends after redemptionMs of frames below negativeSpeechThreshold, with the padded audio", () => {
    // 1400 ms / 32 ms = 43 redemption frames; 800 ms / 32 = 25 pad frames.
    const probabilities = [...frames(30, 0), ...frames(15, 0.9), ...frames(43, 0.1), ...frames(5, 0)];
    const { events } = run(probabilities);
    expect(summary(events)).toEqual(["speechStart@30", "speechRealStart@41", "speechEnd@87"]);
    const end = events[2] as Extract<SpeechEvent, { kind: "speechEnd" }>;
    expect(end.audioStartIndex).toBe(5 * FRAME);
    expect(end.audio!.length).toBe((87 - 5 + 1) * FRAME);
    // The audio is frames 5..87 in order: frame i's samples hold i.
    expect(end.audio![0]).toBe(5);
    expect(end.audio![end.audio!.length - 1]).toBe(87);
    expect(end.audio![(30 - 5) * FRAME]).toBe(30);
  });

  it("does not count frames between the thresholds toward redemption, and a speech frame resets it", () => {
    const probabilities = [...frames(2, 0), ...frames(15, 0.9), ...frames(42, 0.1), 0.27, 0.9, ...frames(42, 0.1)];
    const { events } = run(probabilities);
    expect(summary(events)).toEqual(["speechStart@2", "speechRealStart@13"]);
  });

  it("calls speech shorter than minSpeechMs a misfire and gives no audio", () => {
    const { events } = run([...frames(2, 0), ...frames(5, 0.9), ...frames(43, 0.1)]);
    expect(summary(events)).toEqual(["speechStart@2", "misfire@49"]);
  });

  it("starts again after an utterance ends", () => {
    const utterance = [...frames(15, 0.9), ...frames(43, 0.1)];
    const { events } = run([0, ...utterance, ...utterance]);
    expect(summary(events)).toEqual([
      "speechStart@1", "speechRealStart@12", "speechEnd@58",
      "speechStart@59", "speechRealStart@70", "speechEnd@116",
    ]);
  });

  it("holds no audio without keepAudio, and the pre-speech pad stays bounded", () => {
    const { events } = run([...frames(1000, 0), ...frames(15, 0.9), ...frames(43, 0)], {}, false);
    const end = events.at(-1) as Extract<SpeechEvent, { kind: "speechEnd" }>;
    expect(end.kind).toBe("speechEnd");
    expect(end.audio).toBeUndefined();
    expect(end.audioStartIndex).toBe((1000 - 25) * FRAME);
  });

  it("pause() drops the utterance, or ends it when submitUserSpeechOnPause", () => {
    const speech = [...frames(2, 0), ...frames(15, 0.9)];
    const dropped = run(speech);
    expect(dropped.detector.pause()).toEqual([]);
    expect(dropped.detector.speaking).toBe(false);
    const submitted = run(speech, { submitUserSpeechOnPause: true });
    expect(summary(submitted.detector.pause())).toEqual(["speechEnd@16"]);
  });
});

describe("resolveVadOptions", () => {
  it("fills vad-web's defaults and the v5 model", () => {
    const o = resolveVadOptions({ assetsPath: "/a/" });
    expect(o).toMatchObject({ ...DEFAULT_SPEECH_OPTIONS, model: "v5", speechEndAudio: false, meterIntervalMs: 100 });
  });

  it("keeps given values, ignores undefined ones", () => {
    const o = resolveVadOptions({ assetsPath: "/a/", model: "legacy", redemptionMs: 500, minSpeechMs: undefined });
    expect(o.model).toBe("legacy");
    expect(o.redemptionMs).toBe(500);
    expect(o.minSpeechMs).toBe(400);
  });

  it.each([
    [{ assetsPath: "" }, "assetsPath"],
    [{ assets: { modelUrl: "/m.onnx" } }, "assets.modelUrl"],
    [{ assetsPath: "/a/", model: "v4" }, "model"],
    [{ assetsPath: "/a/", positiveSpeechThreshold: -0.1 }, "positiveSpeechThreshold"],
    [{ assetsPath: "/a/", negativeSpeechThreshold: 0.35 }, "negativeSpeechThreshold"],
    [{ assetsPath: "/a/", minSpeechMs: Number.NaN }, "minSpeechMs"],
    [{ assetsPath: "/a/", preSpeechPadMs: -5 }, "preSpeechPadMs"],
  ])("rejects %j with a ConfigError naming %s", (options, name) => {
    expect(() => resolveVadOptions(options as never)).toThrow(ConfigError);
    expect(() => resolveVadOptions(options as never)).toThrow(name);
  });
});

describe("SpeechDetector.endWhenQuiet (the STT service judged the turn over)", () => {
  const start = (probabilities: number[]) => {
    const detector = new SpeechDetector({ ...DEFAULT_SPEECH_OPTIONS, redemptionMs: 1400, msPerFrame: 32, keepAudio: false });
    let i = 0;
    const feed = (ps: number[]) => ps.flatMap((p) => detector.push(new Float32Array(FRAME), p, { sampleIndex: i++ * FRAME, contextTime: 0 }));
    feed(probabilities);
    return { detector, feed };
  };

  it("already quiet long enough: the utterance ends now, naming its last speech frame", () => {
    const { detector } = start([...frames(20, 0.9), ...frames(4, 0.05)]);
    const events = detector.endWhenQuiet(100);
    expect(summary(events)).toEqual(["speechEnd@23"]);
    expect(events[0].kind === "speechEnd" && events[0].lastSpeech.sampleIndex).toBe(19 * FRAME);
    expect(detector.speaking).toBe(false);
  });

  it("not yet quiet long enough: it ends on the frame that makes 100 ms (4 frames), long before redemptionMs (1400)", () => {
    const { detector, feed } = start([...frames(20, 0.9), ...frames(1, 0.05)]);
    expect(detector.endWhenQuiet(100)).toEqual([]);
    expect(summary(feed(frames(2, 0.05)))).toEqual([]);
    expect(summary(feed(frames(1, 0.05)))).toEqual(["speechEnd@23"]);
  });

  it("the voice comes back first: the request is dropped, and the utterance ends by redemptionMs as ever", () => {
    const { detector, feed } = start([...frames(20, 0.9), ...frames(1, 0.05)]);
    detector.endWhenQuiet(100);
    expect(summary(feed([...frames(3, 0.9), ...frames(10, 0.05)]))).toEqual([]);
    // 1400 ms = 43 frames of quiet after the last speech frame (23).
    expect(summary(feed(frames(33, 0.05)))).toEqual(["speechEnd@66"]);
  });

  it("too short to be speech: a misfire, as at any end; with no utterance going on, nothing", () => {
    const { detector } = start([...frames(5, 0.9), ...frames(4, 0.05)]);
    expect(summary(detector.endWhenQuiet(100))).toEqual(["misfire@8"]);
    expect(detector.endWhenQuiet(100)).toEqual([]);
  });
});

describe("SpeechDetector.noticeQuiet (a likely end of turn, before redemptionMs: the preemptive reply's cue)", () => {
  const start = (quietMs: number | null) => {
    const detector = new SpeechDetector({ ...DEFAULT_SPEECH_OPTIONS, redemptionMs: 320, msPerFrame: 32, keepAudio: false });
    detector.noticeQuiet(quietMs);
    let i = 0;
    const feed = (ps: number[]) => ps.flatMap((p) => detector.push(new Float32Array(FRAME), p, { sampleIndex: i++ * FRAME, contextTime: i * 0.032 }));
    return { detector, feed };
  };

  it("a confirmed utterance quiet 96 ms (3 frames): speechQuiet names the last speech frame; the utterance goes on to its end at redemptionMs (10 frames)", () => {
    const { feed } = start(96);
    const events = feed([...frames(20, 0.9), ...frames(10, 0.05)]);
    expect(summary(events)).toEqual(["speechStart@0", "speechRealStart@11", "speechQuiet@22", "speechEnd@29"]);
    const quiet = events.find((e) => e.kind === "speechQuiet")!;
    expect(quiet.kind === "speechQuiet" && quiet.lastSpeech.sampleIndex).toBe(19 * FRAME);
  });

  it("the voice comes back after it: speechResumed on the voiced frame, and the next quiet stretch is noticed again", () => {
    const { feed } = start(96);
    const events = feed([...frames(20, 0.9), ...frames(4, 0.05), ...frames(5, 0.9), ...frames(10, 0.05)]);
    expect(summary(events)).toEqual(["speechStart@0", "speechRealStart@11", "speechQuiet@22", "speechResumed@24", "speechQuiet@31", "speechEnd@38"]);
  });

  it("not before the utterance is confirmed (minSpeechMs), not at all when off, and never past redemptionMs", () => {
    expect(summary(start(96).feed([...frames(5, 0.9), ...frames(10, 0.05)]))).toEqual(["speechStart@0", "misfire@14"]);
    expect(summary(start(null).feed([...frames(20, 0.9), ...frames(10, 0.05)]))).toEqual(["speechStart@0", "speechRealStart@11", "speechEnd@29"]);
    expect(summary(start(1000).feed([...frames(20, 0.9), ...frames(10, 0.05)]))).toEqual(["speechStart@0", "speechRealStart@11", "speechEnd@29"]);
  });
});

describe("SpeechDetector.noticeVoiced (speech over the bot too long for a backchannel: bargeIn.backchannels' maxMs)", () => {
  const start = (voicedMs: number | null) => {
    const detector = new SpeechDetector({ ...DEFAULT_SPEECH_OPTIONS, redemptionMs: 320, msPerFrame: 32, keepAudio: false });
    detector.noticeVoiced(voicedMs);
    let i = 0;
    const feed = (ps: number[], echo: FrameEcho = "clear") => ps.flatMap((p) => detector.push(new Float32Array(FRAME), p, { sampleIndex: i++ * FRAME, contextTime: i * 0.032 }, echo));
    return { detector, feed };
  };

  it("on the speech frame that makes the onset-to-frame span reach it (700 ms: 22 frames), once, pauses within included; the utterance goes on", () => {
    const events = start(700).feed([...frames(15, 0.9), ...frames(3, 0.05), ...frames(10, 0.9), ...frames(10, 0.05)]);
    expect(summary(events)).toEqual(["speechStart@0", "speechRealStart@11", "speechVoiced@21", "speechEnd@37"]);
    const voiced = events.find((e) => e.kind === "speechVoiced")!;
    expect(voiced.kind === "speechVoiced" && voiced.voicedMs).toBe(22 * 32);
    // The next utterance is timed from its own onset.
    const { feed } = start(700);
    const two = feed([...frames(15, 0.9), ...frames(12, 0.05), ...frames(25, 0.9)]);
    expect(summary(two)).toEqual(["speechStart@0", "speechRealStart@11", "speechEnd@24", "speechStart@27", "speechRealStart@38", "speechVoiced@48"]);
  });

  it("not for speech shorter than that, nor before the utterance is confirmed (echo the guard cannot vouch for), nor when off", () => {
    expect(summary(start(700).feed([...frames(18, 0.9), ...frames(12, 0.05)]))).toEqual(["speechStart@0", "speechRealStart@11", "speechEnd@27"]);
    expect(summary(start(700).feed(frames(30, 0.9), "unconfirmed"))).toEqual(["speechStart@0"]);
    expect(summary(start(null).feed(frames(30, 0.9)))).toEqual(["speechStart@0", "speechRealStart@11"]);
  });
});
