/**
 * The user's side of the history and its `transcript` events: the words of
 * the turn under way (partial), its message at the turn's end (final), the
 * late words of a flush that timed out (a revision), and a turn resumed
 * before its reply was heard (`turn.resumeUnheard`): the message it ends with
 * replaces the last, same id, and the reply no one heard leaves the history.
 *
 * Thread: main. Owner: VoiceSession, which applies the turn machine's user
 * effects through it; the history and the feed are the session's.
 */
import type { ConversationHistory, UserMessage } from "./history.js";
import type { TranscriptFeed } from "./transcript-feed.js";
import type { TranscriptEvent } from "./types.js";

export class UserMessages {
  readonly #history: ConversationHistory;
  readonly #transcripts: TranscriptFeed;
  readonly #emit: (event: TranscriptEvent) => void;
  /** The last user message: late words of a missed flush go there, and a resumed turn replaces it. */
  #last: UserMessage | undefined;

  constructor(history: ConversationHistory, transcripts: TranscriptFeed, emit: (event: TranscriptEvent) => void) {
    this.#history = history;
    this.#transcripts = transcripts;
    this.#emit = emit;
  }

  /** The last user message, if any. */
  get last(): UserMessage | undefined {
    return this.#last;
  }

  /** The words of the turn under way, not final. */
  partial(text: string): void {
    this.#send(this.#transcripts.partial(this.#transcripts.openUserId(), "user", text));
  }

  /** The turn's message, final. `resumed`: it replaces the last message (whose words it starts with). */
  add(text: string, resumed = false): void {
    // Resumed, the open id is the last message's own (resume() reopened it).
    const id = this.#transcripts.closeUser();
    if (resumed && this.#last) this.#last.text = text;
    else this.#last = this.#history.addUser(id, text);
    this.#send(this.#transcripts.final(this.#last.id, "user", text));
  }

  /** A word of the last turn that came after its flush timed out: it joins that message. */
  late(text: string): void {
    const last = this.#last;
    if (!last) return;
    last.text = `${last.text} ${text}`;
    this.#send(this.#transcripts.final(last.id, "user", last.text));
  }

  /**
   * The user went on before any of the reply to their last message was heard:
   * the turn under way is that message's (its transcript id), and the reply's
   * message, with nothing heard, leaves the history.
   */
  resume(): void {
    const last = this.#last;
    if (!last) return;
    this.#transcripts.reopenUser(last.id);
    this.#history.dropUnheardAfter(last);
  }

  #send(event: TranscriptEvent | undefined): void {
    if (event) this.#emit(event);
  }
}
