/**
 * The turn machine's effects carried out: each effect that `step` returns becomes a call on the
 * player, the VAD, the reply slot or the user's messages, or an event for the app. The machine
 * decides what and in which order (the order of the effects is the contract, turn-machine.ts);
 * this only does it, one effect at a time, in the order given.
 *
 * Thread: main. Owner: VoiceSession, which dispatches the machine's events and passes each effect
 * here. The parts of a running session (components, QuestManager) are read through getters, as
 * they change with each start(). Owns the machine's one timer (`armTimer`).
 */
import type { QuestManager } from "../quest/quest-manager.js";
import type { Emitter } from "../util/emitter.js";
import type { SessionComponents } from "./ports.js";
import type { TurnTiming } from "./reply.js";
import type { ReplySlot } from "./reply-slot.js";
import type { SessionCounters } from "./session-metrics.js";
import type { TurnEffect, TurnEvent } from "./turn-machine.js";
import type { SessionState, VoiceSessionEvents } from "./types.js";
import type { UserMessages } from "./user-messages.js";

export interface TurnEffectsOptions {
  events: Emitter<VoiceSessionEvents>;
  replies: ReplySlot;
  userMessages: UserMessages;
  counters: SessionCounters;
  /** The echo guard is on: the words it drops are counted (`metrics.echoWords`). */
  countEchoWords: boolean;
  /** The running session's audio parts; undefined before start() and after stop(). */
  components(): SessionComponents | undefined;
  /** The running session's QuestManager; undefined before start(). */
  quests(): QuestManager | undefined;
  /** The timing of the turn the next reply answers. */
  turnTiming(): TurnTiming;
  /** Back into the machine (the timer's event). */
  dispatch(event: TurnEvent): void;
  /** The presented state changed (`setState`). */
  announce(state: SessionState): void;
  /** The user's turn is over: the STT's last words are fetched, then the machine decides. */
  endUserTurn(voiceEnd: number | undefined): void;
}

export class TurnEffects {
  readonly #o: TurnEffectsOptions;
  /** The turn machine's one timer (armTimer: a backchannel's word wait, a held turn's end). */
  #timer: ReturnType<typeof setTimeout> | undefined;

  constructor(options: TurnEffectsOptions) {
    this.#o = options;
  }

  /** Stops the machine's timer (the session is stopping). */
  clearTimer(): void {
    clearTimeout(this.#timer);
  }

  apply(effect: TurnEffect): void {
    const o = this.#o;
    const components = o.components();
    switch (effect.kind) {
      case "setState":
        return o.announce(effect.state);
      case "pausePlayback":
        return components?.player.pause(effect.token);
      case "resumePlayback":
        return components?.player.resume(effect.token);
      case "armAutoPause":
        return components?.vad.setAutoPause(effect.token);
      case "armTimer": {
        clearTimeout(this.#timer);
        const at = effect.at;
        this.#timer = setTimeout(() => o.dispatch({ kind: "timer", at }), Math.max(0, at - performance.now()));
        return;
      }
      case "backchannel":
        return o.events.emit("backchannel", { words: [...effect.words], speechMs: effect.speechMs });
      case "userTranscript":
        return o.userMessages.partial(effect.text);
      case "echoWord":
        if (o.countEchoWords) o.counters.echoWords++;
        return;
      case "lateUserWord": // the end of the last turn's speech, after its flush timed out: kept there
        return o.userMessages.late(effect.text);
      case "endUserTurn":
        return o.endUserTurn(effect.voiceEnd);
      case "endVadWhenQuiet":
        return components?.vad.endWhenQuiet?.(effect.quietMs);
      case "addUserMessage":
      case "keepUserWords":
        return o.userMessages.add(effect.text, effect.resumed);
      case "resumeUserTurn":
        return o.userMessages.resume();
      case "fence":
        return components?.player.setGeneration(effect.generation);
      case "startReply": {
        // A held reply to a resumed turn: the message its words replace is not sent too.
        const held = effect.held && { text: effect.held.text, omit: effect.held.resumed ? o.userMessages.last : undefined };
        return o.replies.start(effect.generation, components!.player, o.quests()!, o.turnTiming(), held);
      }
      case "releaseReply":
        return o.replies.release(effect.generation, effect.voiceEnd);
      case "dropHeldReply":
        return o.replies.drop(effect.generation);
      case "cutReplyToHeard":
        return o.replies.cut(effect.generation, components?.player);
      case "flushPlayback":
        return components?.player.flush();
      case "announceInterruption":
        return o.replies.announce(effect);
      case "cancelReply":
        return o.replies.cancel(effect.generation);
      case "finishReply":
        return o.replies.finish(effect.generation, components?.player);
      case "keepHeardReply":
        return o.replies.keepHeard(effect.generation, components?.player);
    }
  }
}
