/**
 * The turn machine and the barge-in core, driven synchronously: no timers, no
 * fakes, no sleeps. Each test feeds events and reads the state and the
 * effects, in order.
 */
import { describe, expect, test } from "vitest";
import { beginBargeIn, confirmBargeIn, misfireBargeIn, NO_BARGE_IN } from "../../src/session/barge-in.js";
import { INITIAL_TURN_STATE, step, type TurnConfig, type TurnEffect, type TurnEvent, type TurnState } from "../../src/session/turn-machine.js";
import { presentedState } from "../../src/session/floor.js";
import { BASE_CONFIG, botSpeakingState, effectKinds, runTurns } from "./turn-machine-helpers.js";

const CONFIG = BASE_CONFIG;
const run = (events: TurnEvent[], state?: TurnState, config = CONFIG) => runTurns(events, state, config);
const kinds = effectKinds;
const botSpeaking = (config = CONFIG) => botSpeakingState(config);

describe("turn machine", () => {
  test("a whole turn: listen → user speaks → the turn ends once the STT is flushed → the reply → listening", () => {
    const { state, effects } = run([
      { kind: "listen" },
      { kind: "speechStart", pausedByWorker: false, at: 0 },
      { kind: "word", text: "hello", at: 100 },
      { kind: "speechEnd", at: 900 },
    ]);
    expect(state.phase).toBe("user_speaking");
    expect(kinds(effects)).toEqual(["state:listening", "state:user_speaking", "userTranscript", "endUserTurn"]);
    const flushed = run([{ kind: "turnFlushed", missed: false, at: 0 }], state);
    expect(flushed.effects).toEqual([
      { kind: "addUserMessage", text: "hello" },
      { kind: "fence", generation: 1 },
      { kind: "setState", state: "bot_thinking" },
      { kind: "startReply", generation: 1 },
    ]);
    const audible = run([{ kind: "replyAudible", generation: 1 }], flushed.state);
    expect(audible.effects).toEqual([{ kind: "setState", state: "bot_speaking" }, { kind: "armAutoPause", token: 1 }]);
    const done = run([{ kind: "replyDone", generation: 1 }], audible.state);
    expect(done.effects).toEqual([
      { kind: "armAutoPause", token: null },
      { kind: "finishReply", generation: 1 },
      { kind: "setState", state: "listening" },
    ]);
    expect(done.state.reply.kind).toBe("none");
  });

  test("the STT's pause probability ends the turn only after a word, past the threshold, and while the VAD hears no speech", () => {
    const listening = run([{ kind: "listen" }]).state;
    expect(run([{ kind: "sttPause", probability: 0.99 }], listening).effects).toEqual([]); // no word yet
    const worded = run([{ kind: "speechStart", pausedByWorker: false, at: 0 }, { kind: "word", text: "hi", at: 10 }], listening).state;
    expect(run([{ kind: "sttPause", probability: 0.99 }], worded).effects).toEqual([]); // VAD still hears speech
    const quiet = { ...worded, voice: { ...worded.voice, kind: "quiet" as const } };
    expect(run([{ kind: "sttPause", probability: 0.5 }], quiet).effects).toEqual([]);
    expect(kinds(run([{ kind: "sttPause", probability: 0.8 }, { kind: "sttPause", probability: 0.9 }], quiet).effects)).toEqual(["endUserTurn"]);
  });

  test("a turn with no words goes back to listening, or to user_speaking when the user started again", () => {
    const ending = run([{ kind: "listen" }, { kind: "speechStart", pausedByWorker: false, at: 0 }, { kind: "speechEnd", at: 500 }]).state;
    expect(run([{ kind: "turnFlushed", missed: false, at: 0 }], ending).effects).toEqual([{ kind: "setState", state: "listening" }]);
    const again = run([{ kind: "speechStart", pausedByWorker: false, at: 600 }], ending).state;
    const flushed = run([{ kind: "turnFlushed", missed: false, at: 0 }], again);
    expect(flushed.effects).toEqual([]);
    expect(flushed.state.phase).toBe("user_speaking");
  });

  test("a missed flush sends the STT's late words to the last user message, until its marker or a new stream", () => {
    const ending = run([{ kind: "listen" }, { kind: "speechStart", pausedByWorker: false, at: 0 }, { kind: "word", text: "turn", at: 1 }, { kind: "speechEnd", at: 2 }]).state;
    const missed = run([{ kind: "turnFlushed", missed: true, at: 0 }, { kind: "word", text: "lights", at: 3 }], ending);
    expect(missed.effects.at(-1)).toEqual({ kind: "lateUserWord", text: "lights" });
    expect(missed.state.userWords).toEqual([]);
    for (const end of [{ kind: "sttMarker" }, { kind: "sttConnected" }] as const) {
      const after = run([end, { kind: "word", text: "on", at: 4 }], missed.state);
      expect(after.effects).toEqual([{ kind: "userTranscript", text: "on" }]);
    }
  });

  test("barge-in by speech: pause with the reply's token, then the ordered interrupt on the VAD's real start", () => {
    const speaking = botSpeaking();
    const paused = run([{ kind: "speechStart", pausedByWorker: false, at: 5000 }], speaking);
    expect(paused.effects).toEqual([{ kind: "pausePlayback", token: 1 }]);
    expect(paused.state.phase).toBe("bot_speaking");
    const confirmed = run([{ kind: "speechRealStart", at: 5200 }], paused.state);
    expect(confirmed.effects).toEqual([
      { kind: "cutReplyToHeard", generation: 1 },
      { kind: "flushPlayback" },
      { kind: "fence", generation: 2 },
      { kind: "armAutoPause", token: null },
      { kind: "announceInterruption", generation: 1, reason: "speech", speechStartToConfirmMs: 200 },
      { kind: "setState", state: "user_speaking" },
      { kind: "cancelReply", generation: 1 },
    ]);
    expect(confirmed.state).toMatchObject({ phase: "user_speaking", generation: 2, reply: { kind: "none" }, bargeIn: NO_BARGE_IN });
  });

  test("the VAD worker's own pause is not repeated, and a speech end confirms and then ends the user's turn", () => {
    const paused = run([{ kind: "speechStart", pausedByWorker: true, at: 5000 }], botSpeaking());
    expect(paused.effects).toEqual([]);
    expect(paused.state.bargeIn).toMatchObject({ kind: "pending", token: 1 });
    const ended = run([{ kind: "speechEnd", at: 5300 }], paused.state);
    expect(kinds(ended.effects)).toEqual(["cutReplyToHeard", "flushPlayback", "fence", "armAutoPause", "announceInterruption", "state:user_speaking", "cancelReply", "endUserTurn"]);
  });

  test("barge-in by words: an STT word while paused confirms; with confirmByWords off it waits for speech", () => {
    const paused = run([{ kind: "speechStart", pausedByWorker: true, at: 5000 }], botSpeaking()).state;
    const byWord = run([{ kind: "word", text: "wait", at: 5080 }], paused);
    expect(byWord.effects.find((e) => e.kind === "announceInterruption")).toMatchObject({ reason: "words", speechStartToConfirmMs: 80 });
    const config = { ...CONFIG, confirmByWords: false };
    const held = run([{ kind: "word", text: "wait", at: 5080 }], run([{ kind: "speechStart", pausedByWorker: true, at: 5000 }], botSpeaking(config), config).state, config);
    // Held (not yet the user's) until real speech vouches for it; then it joins the turn and speech confirms.
    expect(held.effects).toEqual([]);
    expect(held.state.heldWords).toEqual([{ text: "wait", at: 5080 }]);
    const confirmed = run([{ kind: "speechRealStart", at: 5200 }], held.state, config);
    expect(kinds(confirmed.effects).slice(0, 2)).toEqual(["userTranscript", "cutReplyToHeard"]);
    expect(confirmed.effects.find((e) => e.kind === "announceInterruption")).toMatchObject({ reason: "speech" });
    // A burst that misfires leaves no word behind: the STT's late word for it is not a user turn.
    const burst = run([{ kind: "misfire", resumedByWorker: true }, { kind: "replyDone", generation: 1 }], held.state, config);
    expect(burst.state.userWords).toEqual([]);
    expect(kinds(burst.effects)[0]).toBe("echoWord");
  });

  test("words in an utterance the VAD then calls a misfire end the turn there, as a speech end would; a hold or push-to-talk keeps it open", () => {
    // "wait" confirmed the barge-in by its word; the VAD found the utterance too short.
    const confirmed = run([{ kind: "speechStart", pausedByWorker: true, at: 5000 }, { kind: "word", text: "wait", at: 5080 }], botSpeaking()).state;
    expect(confirmed).toMatchObject({ phase: "user_speaking", userWords: ["wait"], voice: { kind: "onset" } });
    const ended = run([{ kind: "misfire", resumedByWorker: false }], confirmed);
    // The voice's end is unknown (the misfire does not say, and the earlier turn's is stale).
    expect(ended.effects).toEqual([{ kind: "endUserTurn", voiceEnd: undefined }]);
    expect(kinds(run([{ kind: "turnFlushed", missed: false, at: 0 }], ended.state).effects)).toContain("startReply");
    // A quick "yes" while listening, its word before the VAD's verdict: the same.
    const yes = run([{ kind: "listen" }, { kind: "speechStart", pausedByWorker: false, at: 0 }, { kind: "word", text: "yes", at: 150 }, { kind: "misfire", resumedByWorker: false }]);
    expect(kinds(yes.effects)).toEqual(["state:listening", "state:user_speaking", "userTranscript", "endUserTurn"]);
    // With push-to-talk the button ends the turn; with no word the floor goes back.
    const ptt = { ...CONFIG, pushToTalk: true };
    expect(run([{ kind: "misfire", resumedByWorker: false }], confirmed, ptt).effects).toEqual([]);
    const wordless = run([{ kind: "listen" }, { kind: "speechStart", pausedByWorker: false, at: 0 }, { kind: "misfire", resumedByWorker: false }]);
    expect(kinds(wordless.effects)).toEqual(["state:listening", "state:user_speaking", "state:listening"]);
  });

  test("a misfire resumes the paused reply with its token and drops the words heard in the burst", () => {
    const paused = run([{ kind: "speechStart", pausedByWorker: false, at: 5000 }], { ...botSpeaking(), userWords: ["earlier"] });
    const withCough = { ...paused.state, userWords: ["earlier", "uh"] };
    const misfired = run([{ kind: "misfire", resumedByWorker: false }], withCough);
    expect(misfired.effects).toEqual([{ kind: "resumePlayback", token: 1 }]);
    expect(misfired.state).toMatchObject({ phase: "bot_speaking", userWords: ["earlier"], bargeIn: NO_BARGE_IN });
    expect(run([{ kind: "misfire", resumedByWorker: true }], withCough).effects).toEqual([]);
  });

  test("with barge-in off, speech over the bot neither pauses nor interrupts", () => {
    const config = { ...CONFIG, bargeInEnabled: false };
    const speaking = botSpeaking(config);
    const { effects, state } = run([{ kind: "speechStart", pausedByWorker: false, at: 1 }, { kind: "speechRealStart", at: 300 }, { kind: "speechEnd", at: 900 }], speaking, config);
    expect(effects).toEqual([]);
    expect(state.phase).toBe("bot_speaking");
    expect(run([{ kind: "replyAudible", generation: 1 }], { ...speaking, reply: { kind: "playing", generation: 1, audible: false } }, config).effects).toContainEqual({ kind: "armAutoPause", token: null });
  });

  test("speech with no reply to barge into starts the user's turn and pauses nothing, even if the worker's stale pause landed", () => {
    const { effects, state } = run([{ kind: "listen" }, { kind: "speechStart", pausedByWorker: true, at: 0 }]);
    expect(effects).toEqual([{ kind: "setState", state: "listening" }, { kind: "setState", state: "user_speaking" }]);
    expect(state.bargeIn).toBe(NO_BARGE_IN);
  });

  test("interrupt() and a stall hand the floor to whoever speaks; events of an old reply are ignored", () => {
    const api = run([{ kind: "interrupt", reason: "api" }], botSpeaking());
    expect(api.effects.find((e) => e.kind === "announceInterruption")).toEqual({ kind: "announceInterruption", generation: 1, reason: "api", speechStartToConfirmMs: undefined });
    expect(api.state.phase).toBe("listening");
    const stall = run([{ kind: "interrupt", reason: "stall" }], { ...botSpeaking(), voice: { kind: "onset", startAt: 0, realAt: -Infinity } });
    expect(stall.state.phase).toBe("user_speaking");
    expect(run([{ kind: "replyDone", generation: 1 }, { kind: "replyAudible", generation: 1 }, { kind: "interrupt", reason: "api" }], api.state).effects).toEqual([]);
  });

  test("stop keeps the user's words and the heard part of the reply; stopped goes idle", () => {
    const stopping = run([{ kind: "stop" }], { ...botSpeaking(), userWords: ["and", "then"] });
    expect(stopping.effects).toEqual([
      { kind: "keepUserWords", text: "and then" },
      { kind: "keepHeardReply", generation: 1 },
    ]);
    const stopped = run([{ kind: "stopped" }], stopping.state);
    expect(stopped.effects).toEqual([{ kind: "setState", state: "idle" }]);
    expect(stopped.state).toMatchObject({ phase: "idle", generation: 1, reply: { kind: "none" } });
  });

  test("a word the new STT stream will hear again is taken back from the turn", () => {
    const worded = run([{ kind: "listen" }, { kind: "word", text: "help", at: 0 }, { kind: "word", text: "m", at: 1 }]).state;
    const back = run([{ kind: "wordRetracted" }], worded);
    expect(back.state.userWords).toEqual(["help"]);
    expect(back.effects).toEqual([{ kind: "userTranscript", text: "help" }]);
    expect(run([{ kind: "wordRetracted" }], INITIAL_TURN_STATE).effects).toEqual([]);
  });

  test("the STT down shows as reconnecting only while no one has the floor; listening once it is back", () => {
    const listening = run([{ kind: "listen" }]).state;
    const down = run([{ kind: "sttLost" }], listening);
    expect(kinds(down.effects)).toEqual(["state:reconnecting"]);
    expect(presentedState(down.state)).toBe("reconnecting");
    expect(down.state.phase).toBe("listening"); // the floor is still nobody's: a typed turn may start a reply
    expect(run([{ kind: "sttLost" }], down.state).effects).toEqual([]); // each retry says it again: once is enough
    // Speech while down is the user's turn (kept for the new stream); it ends back in "reconnecting".
    const speaking = run([{ kind: "speechStart", pausedByWorker: false, at: 0 }], down.state);
    expect(kinds(speaking.effects)).toEqual(["state:user_speaking"]);
    const quiet = run([{ kind: "misfire", resumedByWorker: false }], speaking.state);
    expect(kinds(quiet.effects)).toEqual(["state:reconnecting"]);
    expect(kinds(run([{ kind: "sttConnected" }], quiet.state).effects)).toEqual(["state:listening"]);
    // A reply that plays while the STT is down shows as the bot's, then reconnecting when it is done.
    const bot = run([{ kind: "sttLost" }], botSpeaking());
    expect(bot.effects).toEqual([]);
    expect(presentedState(bot.state)).toBe("bot_speaking");
    expect(kinds(run([{ kind: "replyDone", generation: 1 }], bot.state).effects)).toEqual(["armAutoPause", "finishReply", "state:reconnecting"]);
    expect(kinds(run([{ kind: "sttConnected" }], bot.state).effects)).toEqual([]);
  });
});

describe("turn machine with the echo guard: words near the bot's audio need real speech to vouch for them", () => {
  const GUARDED: TurnConfig = { ...CONFIG, vouchWordsMs: 1500 };

  test("a word the STT owed the last turn (its flush timed out) goes to that turn even once the reply is audible: not held as echo", () => {
    const ending = run([{ kind: "listen" }, { kind: "speechStart", pausedByWorker: false, at: 0 }, { kind: "word", text: "please", at: 1 }, { kind: "speechEnd", at: 2 }], undefined, GUARDED).state;
    const audible = run([{ kind: "turnFlushed", missed: true, at: 3 }, { kind: "replyAudible", generation: 1 }], ending, GUARDED).state;
    // Seen in a loaded browser run: "turn on the lights" came while the reply played, was held, and dropped as echo.
    const late = run([{ kind: "word", text: "turn", at: 2000, nearBot: true }], audible, GUARDED);
    expect(late.effects).toEqual([{ kind: "lateUserWord", text: "turn" }]);
    expect(late.state.heldWords).toEqual([]);
    // After the marker, a word near the bot is held again until speech vouches for it.
    const after = run([{ kind: "sttMarker" }, { kind: "word", text: "yeah", at: 2100, nearBot: true }], audible, GUARDED);
    expect(after.effects).toEqual([]);
    expect(after.state.heldWords.map((w) => w.text)).toEqual(["yeah"]);
  });

  test("a misheard echo word while the bot speaks is held, then dropped as echo on the misfire: no barge-in, no user turn", () => {
    const s = botSpeaking(GUARDED);
    const { state, effects } = run(
      [
        { kind: "speechStart", pausedByWorker: true, at: 5000 },
        { kind: "word", text: "guy", at: 5300, nearBot: true },
        { kind: "misfire", resumedByWorker: true },
      ],
      s,
      GUARDED,
    );
    expect(effects).toEqual([{ kind: "echoWord", text: "guy" }]);
    expect(state.phase).toBe("bot_speaking");
    expect(state.userWords).toEqual([]);
    expect(state.heldWords).toEqual([]);
  });

  test("a lagging STT's words, spoken during the user's real speech just after a reply, stay the user's though they come past the word window", () => {
    // The reply ended at 1000; the user spoke 5300–6200 (real speech); the STT, loaded, returns the
    // question's words 2 s after the VAD's speech end, while the turn is still being flushed.
    const listening = run([{ kind: "listen" }], undefined, GUARDED).state;
    const spoke = run(
      [
        { kind: "speechStart", pausedByWorker: false, at: 5300 },
        { kind: "speechRealStart", at: 5460 },
        { kind: "speechEnd", at: 6200 },
      ],
      listening,
      GUARDED,
    );
    const late = run(
      [
        { kind: "word", text: "wait", at: 8200, nearBot: true, spokenAt: 5250 },
        { kind: "word", text: "a", at: 8250, nearBot: true, spokenAt: 5550 },
        { kind: "word", text: "moment", at: 8300, nearBot: true, spokenAt: 5650 },
      ],
      spoke.state,
      GUARDED,
    );
    expect(late.state.heldWords).toEqual([]);
    expect(late.state.userWords).toEqual(["wait", "a", "moment"]);
    // A word whose audio came before that speech began (the bot's last words, heard back late) is still held.
    const echo = run([{ kind: "word", text: "today", at: 8200, nearBot: true, spokenAt: 4000 }], spoke.state, GUARDED);
    expect(echo.state.userWords).toEqual([]);
    expect(echo.state.heldWords.map((w) => w.text)).toEqual(["today"]);
    // After a misfire nothing is vouched by it, however late its words come.
    const misfired = run([{ kind: "speechStart", pausedByWorker: false, at: 9000 }, { kind: "misfire", resumedByWorker: false }], late.state, GUARDED);
    const afterMisfire = run([{ kind: "word", text: "guy", at: 12000, nearBot: true, spokenAt: 9050 }], misfired.state, GUARDED);
    expect(afterMisfire.state.heldWords.map((w) => w.text)).toEqual(["guy"]);
  });

  test("a word held near the bot becomes the user's once real speech comes: the barge-in is confirmed and the word starts the turn", () => {
    const s = botSpeaking(GUARDED);
    const { state, effects } = run(
      [
        { kind: "speechStart", pausedByWorker: true, at: 5000 },
        { kind: "word", text: "wait", at: 5100, nearBot: true },
        { kind: "speechRealStart", at: 5200 },
      ],
      s,
      GUARDED,
    );
    expect(kinds(effects)).toEqual(["userTranscript", "cutReplyToHeard", "flushPlayback", "fence", "armAutoPause", "announceInterruption", "state:user_speaking", "cancelReply"]);
    expect(effects[0]).toEqual({ kind: "userTranscript", text: "wait" });
    expect(effects.find((e) => e.kind === "announceInterruption")).toMatchObject({ reason: "words" });
    expect(state.userWords).toEqual(["wait"]);
  });

  test("after the bot stops, its echo's late words make no turn; the user's words within the window of real speech do", () => {
    const s = run([{ kind: "replyDone", generation: 1 }], botSpeaking(GUARDED), GUARDED).state;
    const echo = run([{ kind: "word", text: "happen", at: 6000, nearBot: true }, { kind: "sttPause", probability: 1 }], s, GUARDED);
    expect(echo.effects).toEqual([]);
    expect(echo.state.phase).toBe("listening");
    // 1.6 s later the held word has expired: it is counted as echo when the next word comes.
    const later = run([{ kind: "word", text: "hi", at: 7700, nearBot: true }], echo.state, GUARDED);
    expect(later.effects).toEqual([{ kind: "echoWord", text: "happen" }]);
    // Real speech vouches for words up to 1.5 s after it ended (the STT's lag).
    const spoke = run([{ kind: "speechStart", pausedByWorker: false, at: 8000 }, { kind: "speechRealStart", at: 8200 }, { kind: "speechEnd", at: 8900 }, { kind: "word", text: "yes", at: 9500, nearBot: true }], s, GUARDED);
    expect(spoke.state.userWords).toEqual(["yes"]);
  });

  test("words held from before the user's utterance began are echo even when the utterance vouches for later ones", () => {
    const s = botSpeaking(GUARDED);
    const { state, effects } = run(
      [
        { kind: "word", text: "liar", at: 4800, nearBot: true },
        { kind: "speechStart", pausedByWorker: true, at: 5000 },
        { kind: "word", text: "stop", at: 5400, nearBot: true },
        { kind: "speechRealStart", at: 5500 },
      ],
      s,
      GUARDED,
    );
    expect(effects.slice(0, 2)).toEqual([{ kind: "echoWord", text: "liar" }, { kind: "userTranscript", text: "stop" }]);
    expect(state.userWords).toEqual(["stop"]);
  });

  test("an echo word that arrives late, after the user began, but was spoken before: echo, whether held or vouched; the user's own words stay", () => {
    const s = botSpeaking(GUARDED);
    const { state, effects } = run(
      [
        { kind: "speechStart", pausedByWorker: true, at: 5000 },
        // Held, then the utterance vouches: "once" was captured 1.2 s before the onset (the STT's lag).
        { kind: "word", text: "once", at: 5300, spokenAt: 3800, nearBot: true },
        { kind: "speechRealStart", at: 5400 },
        // Arriving while real speech vouches for everything: "upon" was spoken before the onset too.
        { kind: "word", text: "upon", at: 5450, spokenAt: 4100, nearBot: true },
        { kind: "word", text: "stop", at: 5600, spokenAt: 5050, nearBot: true },
      ],
      s,
      GUARDED,
    );
    expect(effects.filter((e) => e.kind === "echoWord")).toEqual([{ kind: "echoWord", text: "once" }, { kind: "echoWord", text: "upon" }]);
    expect(state.userWords).toEqual(["stop"]);
    // Once the turn has words, an earlier utterance's late word is still the user's (a pause split it).
    const more = run([{ kind: "speechEnd", at: 6000 }, { kind: "speechStart", pausedByWorker: false, at: 6300 }, { kind: "word", text: "please", at: 6500, spokenAt: 5700, nearBot: true }], state, GUARDED);
    expect(more.state.userWords).toEqual(["stop", "please"]);
  });

  test("with the guard off, nearBot changes nothing", () => {
    const { state } = run([{ kind: "word", text: "guy", at: 6000, nearBot: true }], run([{ kind: "replyDone", generation: 1 }], botSpeaking()).state);
    expect(state.userWords).toEqual(["guy"]);
  });
});

describe("barge-in core", () => {
  test("begin pauses with the token unless the worker did; confirm measures from the speech start; misfire resumes", () => {
    expect(beginBargeIn(7, { pausedByWorker: false, at: 100, wordsBefore: 2 })).toEqual({
      bargeIn: { kind: "pending", token: 7, startedAt: 100, wordsBefore: 2 },
      effects: [{ kind: "pausePlayback", token: 7 }],
    });
    const pending = beginBargeIn(7, { pausedByWorker: true, at: 100, wordsBefore: 2 });
    expect(pending.effects).toEqual([]);
    expect(confirmBargeIn(pending.bargeIn, 350)).toEqual({ bargeIn: NO_BARGE_IN, confirmMs: 250 });
    expect(misfireBargeIn(pending.bargeIn, false)).toEqual({ bargeIn: NO_BARGE_IN, effects: [{ kind: "resumePlayback", token: 7 }], wordsBefore: 2 });
    expect(confirmBargeIn(NO_BARGE_IN, 1)).toBeUndefined();
    expect(misfireBargeIn(NO_BARGE_IN, false)).toBeUndefined();
  });
});

const endOfTurn = (effects: TurnEffect[]) => effects.filter((e) => e.kind === "endUserTurn");

describe("turn machine: where the voice ended (for voiceToVoiceMs, test/unit/voice-to-voice.test.ts)", () => {
  test("the VAD's speech end hands its last speech frame to the end of the turn", () => {
    const { effects } = run([
      { kind: "listen" },
      { kind: "speechStart", pausedByWorker: false, at: 0 },
      { kind: "word", text: "hello", at: 300 },
      { kind: "speechEnd", at: 1200, voiceEnd: 12.34 },
    ]);
    expect(endOfTurn(effects)).toEqual([{ kind: "endUserTurn", voiceEnd: 12.34 }]);
  });

  test("a pause, then more speech: the turn that has words ends where its own utterance's voice did", () => {
    const { effects } = run([
      { kind: "listen" },
      { kind: "speechStart", pausedByWorker: false, at: 0 },
      { kind: "speechEnd", at: 700, voiceEnd: 1.0 }, // a cough: the STT has no words for it
      { kind: "turnFlushed", missed: false, at: 0 },
      { kind: "speechStart", pausedByWorker: false, at: 900 },
      { kind: "word", text: "hello", at: 1100 },
      { kind: "sttPause", probability: 0.9 }, // the VAD still hears speech: not the end
      { kind: "speechEnd", at: 2000, voiceEnd: 2.5 },
    ]);
    expect(endOfTurn(effects)).toEqual([
      { kind: "endUserTurn", voiceEnd: 1.0 },
      { kind: "endUserTurn", voiceEnd: 2.5 },
    ]);
  });

  test("push-to-talk: a lagging VAD's speech start after the release leaves the floor free; the next press takes it", () => {
    const ptt = { ...CONFIG, pushToTalk: true };
    const released = run([{ kind: "listen" }, { kind: "pushStart" }, { kind: "pushEnd" }, { kind: "turnFlushed", missed: false, at: 600 }], INITIAL_TURN_STATE, ptt);
    expect(released.state.phase).toBe("listening");
    // The VAD, behind under load, calls speech in audio from while the button was held (demo-controls.spec: stuck in user_speaking).
    const late = run([{ kind: "speechStart", pausedByWorker: false, at: 900 }, { kind: "speechEnd", at: 1200 }], released.state, ptt);
    expect(late.state.phase).toBe("listening");
    expect(kinds(late.effects)).toEqual([]);
    expect(run([{ kind: "pushStart" }], late.state, ptt).state.phase).toBe("user_speaking");
    // Without push-to-talk the same speech start is the user's turn.
    expect(run([{ kind: "speechStart", pausedByWorker: false, at: 900 }], released.state).state.phase).toBe("user_speaking");
  });

  test("push-to-talk released while the VAD still hears speech, and nothing said: the floor goes back at the flush; pressed again during it, the user keeps it", () => {
    const ptt = { ...CONFIG, pushToTalk: true };
    // A tone while held (demo-controls.spec, under load): the VAD's speech outlasts the release and the flush.
    const held = [{ kind: "listen" }, { kind: "pushStart" }, { kind: "speechStart", pausedByWorker: false, at: 0 }, { kind: "pushEnd" }] as TurnEvent[];
    const flushed = run([...held, { kind: "turnFlushed", missed: false, at: 600, talkHeld: false }], INITIAL_TURN_STATE, ptt);
    expect(flushed.state.phase).toBe("listening");
    // The VAD's late end changes nothing, and the next press takes the floor.
    const ended = run([{ kind: "speechEnd", at: 900, voiceEnd: 0.9 }], flushed.state, ptt);
    expect(ended.state.phase).toBe("listening");
    expect(run([{ kind: "pushStart" }], ended.state, ptt).state.phase).toBe("user_speaking");
    // The button pressed again before the flush came back: the user keeps the floor, and its release ends that turn.
    const again = run([...held, { kind: "pushStart" }, { kind: "turnFlushed", missed: false, at: 600, talkHeld: true }], INITIAL_TURN_STATE, ptt);
    expect(again.state.phase).toBe("user_speaking");
    expect(endOfTurn(run([{ kind: "pushEnd" }], again.state, ptt).effects)).toHaveLength(1);
    // Without push-to-talk the VAD's speech keeps the floor until its end.
    expect(run([{ kind: "listen" }, { kind: "speechStart", pausedByWorker: false, at: 0 }, { kind: "turnFlushed", missed: false, at: 600 }]).state.phase).toBe("user_speaking");
  });

  test("push-to-talk released while the VAD still hears speech: where the voice ends is unknown, not the last utterance's end", () => {
    const { effects } = run(
      [
        { kind: "listen" },
        { kind: "pushStart" },
        { kind: "speechStart", pausedByWorker: false, at: 0 },
        { kind: "speechEnd", at: 700, voiceEnd: 1.0 },
        { kind: "speechStart", pausedByWorker: false, at: 900 },
        { kind: "word", text: "hello", at: 1100 },
        { kind: "pushEnd" },
      ],
      INITIAL_TURN_STATE,
      { ...CONFIG, pushToTalk: true },
    );
    expect(endOfTurn(effects)).toEqual([{ kind: "endUserTurn", voiceEnd: undefined }]);
  });
});
