// `npm run bench -- turn`, the backchannel part (issue #19): each corpus item
// (bench/lib/backchannel-corpus.mjs) is said over the bot's long story reply,
// 1.2 s or more into it, and its outcome is recorded:
// - "interruption": the session's `interruption` event (with the onset →
//   confirmation time, in context time);
// - "backchannel": the `backchannel` event (the reply went on);
// - "resumed": neither, 2.5 s after the item ended (a pause that resumed as
//   a misfire, or nothing heard at all);
// - "void": the reply ended before the item did; the item is said again once
//   over the next reply.
// `policy`: bargeIn.backchannels on; off, today's default, any word confirms.
// After an interruption the item's words become a turn, whose reply (the story
// again) is the next item's target; when no reply is playing, or it has less
// than REPLY_LEFT_S left, a question is asked for a fresh one.
import { freshReply, makeBenchSession, until } from "./bench-session.js";

/** The story runs ~15 s: an item starts only while this much of it is surely left. */
const REPLY_LEFT_S = 6;
const REPLY_S = 14;
/** An item starts this long into a reply at the earliest: the bot is talking, past its first words. */
const FROM_REPLY_START_S = 1.2;
/** After an item ends, the longest the policy may still take to decide (wordWaitMs 700, the VAD's redemption 600, the STT). */
const SETTLE_S = 2.5;

/** The reply now playing has REPLY_LEFT_S left, or a fresh one is asked for. Returns its first audio's context time. */
async function replyToTalkOver(t) {
  // The previous item's turn may be on its way to a reply (a recording of a reader goes on for seconds).
  await until(() => t.session.state === "bot_speaking" && t.ttsStreams.at(-1)?.firstAudioContextTime !== undefined, 12000, "a reply").catch(() => {});
  const first = t.ttsStreams.at(-1)?.firstAudioContextTime;
  const fresh = t.session.state === "bot_speaking" && first !== undefined && t.context.currentTime - first < REPLY_S - REPLY_LEFT_S;
  if (!fresh) await freshReply(t);
  return t.ttsStreams.at(-1).firstAudioContextTime;
}

async function run({ policy, items }) {
  const t = await makeBenchSession({ story: true, sessionOptions: policy ? { bargeIn: { backchannels: true } } : {} });
  await t.session.start();
  // A real microphone is never digitally silent (bench-session.js noiseBed); the recordings carry their rooms.
  t.noiseBed(-53);
  const trials = [];
  const textFrom = [];
  for (const item of items) {
    for (let attempt = 1; attempt <= 2; attempt++) {
      const replyStart = await replyToTalkOver(t);
      const replies = t.log.thinkingAt.length;
      const before = { interruptions: t.log.interruptions.length, backchannels: t.log.backchannels.length, vad: t.log.vad.length, userText: t.log.userText.length };
      const onsetAt = Math.max(t.context.currentTime + 0.25, replyStart + FROM_REPLY_START_S);
      const spoken = await t.say(item.name, { onsetAt });
      const decided = () => t.log.interruptions.length > before.interruptions || t.log.backchannels.length > before.backchannels;
      await until(() => decided() || t.context.currentTime > spoken.end + SETTLE_S, (spoken.end - t.context.currentTime + SETTLE_S + 5) * 1000, "an outcome").catch(() => {});
      const interruption = t.log.interruptions.slice(before.interruptions).find((e) => e.reason === "speech" || e.reason === "words");
      const backchannel = t.log.backchannels[before.backchannels];
      // The reply ended under the item (no reply speaking, and none cut): say it again over the next one.
      const ended = !interruption && !backchannel && (t.session.state !== "bot_speaking" || t.log.thinkingAt.length > replies);
      const outcome = interruption ? "interruption" : backchannel ? "backchannel" : ended ? "void" : "resumed";
      const trial = {
        ...item,
        attempt,
        outcome,
        reason: interruption?.reason ?? null,
        onsetToConfirmMs: interruption ? Math.round((interruption.contextTime - spoken.onset) * 1000) : null,
        words: backchannel ? backchannel.words : [],
        // An interruption's words, filled in at the end: the user's text shown until the next item.
        userText: null,
        speechMs: backchannel?.speechMs ?? null,
        vadTrace: t.log.vad.slice(before.vad).map((e) => `${e.kind}@${Math.round((e.contextTime - spoken.onset) * 1000)}`).join(" "),
      };
      trials.push(trial);
      textFrom.push(before.userText);
      if (outcome !== "void") break;
    }
  }
  trials.forEach((trial, i) => {
    if (trial.outcome !== "interruption") return;
    const until = textFrom[i + 1] ?? t.log.userText.length;
    trial.userText = t.log.userText.slice(textFrom[i], until).at(-1)?.text ?? "";
  });
  const result = { trials, errors: t.log.errors, warnings: t.log.warnings.slice(0, 20) };
  await t.close();
  return result;
}

window.bench = { run };
window.benchReady = true;
