/**
 * The `transcript` events' one rule-keeper: every message has a stable id,
 * and `final: true` is said once per message.
 *
 * A UI keeps one row per id and replaces its text on every event. A UI that
 * appends a row on `final` sees each message once. When a message changes
 * after its final (the STT's late words after a flush that timed out), the
 * change is a `revised` event of the same id, never a second final. Partial
 * text that comes after the final (LLM tokens racing an interruption) is
 * dropped: the final text is what the user heard.
 *
 * Pure: no DOM, no clock. Owner: VoiceSession, which asks it for ids and
 * for the event to emit (or none).
 */
import type { TranscriptEvent } from "./types.js";

type Role = TranscriptEvent["role"];

export class TranscriptFeed {
  #count = 0;
  /** The user's message being spoken: its id exists from its first partial. */
  #openUserId: string | undefined;
  /** The last text said of each message, and whether it was final; ids of a session only. */
  readonly #said = new Map<string, { text: string; final: boolean }>();

  /** Ids from elsewhere (a seeded history): new ids count on after the highest of them. */
  reserve(ids: readonly string[]): void {
    for (const id of ids) {
      const n = /^[ua](\d+)$/.exec(id)?.[1];
      if (n !== undefined) this.#count = Math.max(this.#count, Number(n));
    }
  }

  /** A new message id: `u1`, `a2`, … in the order the messages begin. */
  newId(role: Role): string {
    this.#count++;
    return `${role === "user" ? "u" : "a"}${this.#count}`;
  }

  /** The id of the user's message in progress (allocated on first use). */
  openUserId(): string {
    this.#openUserId ??= this.newId("user");
    return this.#openUserId;
  }

  /** The user's message in progress is now in history (or dropped): the next words start another. */
  closeUser(): string {
    const id = this.openUserId();
    this.#openUserId = undefined;
    return id;
  }

  /**
   * The user's message `id`, final already, is being spoken again (a turn
   * resumed: `turn.resumeUnheard`): the words under way are its. Their
   * partials are not sent (it was final); its new text comes as a revision.
   */
  reopenUser(id: string): void {
    this.#openUserId = id;
  }

  /** The event for text still growing, or undefined once the message is final. */
  partial(id: string, role: Role, text: string): TranscriptEvent | undefined {
    const said = this.#said.get(id);
    if (said?.final || said?.text === text) return undefined;
    this.#said.set(id, { text, final: false });
    return { id, role, text, final: false, revised: false };
  }

  /** The message is complete: its final event, or a revision when it was final already (undefined if unchanged). */
  final(id: string, role: Role, text: string): TranscriptEvent | undefined {
    const said = this.#said.get(id);
    if (said?.final && said.text === text) return undefined;
    this.#said.set(id, { text, final: true });
    return { id, role, text, final: !said?.final, revised: !!said?.final };
  }
}
