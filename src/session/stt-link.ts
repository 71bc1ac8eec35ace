/**
 * The session's link to its speech-to-text service: the "stt" quest (one
 * stream at a time), the bounded uplink that feeds it, the replay of speech a
 * failed stream had not turned into words, and reconnects under a
 * ReconnectPolicy. It reports what the STT heard as SttLinkEvents and decides
 * nothing about turns: that is the turn machine's.
 *
 * Thread: main. Owner: VoiceSession, which calls `connect()` once in start(),
 * `send()` for every uplink frame, `turnStarted()` when the user gets the
 * floor, `flush()` at each turn's end and `noteSpeech()` on the VAD's speech
 * start and end.
 */
import { DEFAULTS } from "../defaults.js";
import { OverloadError } from "../errors.js";
import type { ChatMessage, SttProvider, SttStream } from "../providers/types.js";
import { Quest } from "../quest/quest.js";
import type { QuestManager } from "../quest/quest-manager.js";
import { Uplink, type UplinkMetrics, type UplinkOverload } from "../uplink/uplink.js";
import { abortable, isAbort } from "../util/abort.js";
import { delay, timeout } from "../util/timeout.js";
import type { ReconnectContext, ReconnectPolicy } from "./reconnect-policy.js";
import { SpeechReplay } from "./speech-replay.js";
import type { VoiceSessionOptions } from "./types.js";

export type SttLinkEvent =
  /** `spokenAtMs`: when its audio was captured (performance.now()), when the link still knows. */
  | { kind: "word"; text: string; spokenAtMs?: number }
  | { kind: "marker" }
  | { kind: "pause"; probability: number }
  /** The service judged the turn over (`eager`: likely, may resume), or heard the user go on or begin anew. */
  | { kind: "endOfTurn"; eager: boolean; text?: string }
  | { kind: "turnResumed" }
  /** The new stream hears the last word again (it was still open): take it back. */
  | { kind: "wordRetracted" }
  /** A stream is up; `attempts`: the reconnect attempts it took (0 for the first connection). */
  | { kind: "connected"; attempts: number }
  | { kind: "reconnecting"; attempt: number; delayMs: number; reason: ReconnectContext["reason"] | "moved"; message: string; cause: unknown }
  | ({ kind: "overload" } & UplinkOverload)
  /** Something the app should know that stops nothing (the session's `warning` event). */
  | { kind: "warning"; message: string }
  /** `fatal`: the policy gave up; the session must stop. */
  | { kind: "error"; error: unknown; fatal: boolean };

export interface SttLinkOptions {
  provider: SttProvider;
  quests: QuestManager;
  /** The session's signal: once aborted, nothing reconnects. */
  signal: AbortSignal;
  uplink: NonNullable<VoiceSessionOptions["uplink"]>;
  policy: ReconnectPolicy;
  emit(event: SttLinkEvent): void;
  /** The conversation so far, for a new stream (SttConnectContext). Default: none. */
  conversation?: () => readonly ChatMessage[];
  /** The clock, in ms. Default performance.now. */
  now?: () => number;
  /** While the user has the floor, seconds since their turn's onset (else undefined): a new stream opens that turn (SttStream.turnStarted). */
  openTurn?: () => number | undefined;
  /** Someone has the floor (a user turn, a reply playing): a move to a new stream (SttEvent "move") waits. Default: never. */
  busy?: () => boolean;
}

/** The "stt" quest's resource: the stream and its one sender. */
interface OpenStream {
  stream: SttStream;
  uplink: Uplink;
}

/** Uplink metrics that count over the whole session, across reconnects. */
const UPLINK_COUNTS = ["admissionRejects", "lateArrivals", "wouldReject", "gapSamples", "overloads"] as const;
type UplinkCounts = Record<(typeof UPLINK_COUNTS)[number], number>;

/** How often a move to a new stream looks for a quiet moment, ms. */
const MOVE_POLL_MS = 100;

export class SttLink {
  readonly #o: SttLinkOptions;
  readonly #now: () => number;
  /** Audio the STT has not confirmed as words yet, for a new stream after a failure. */
  readonly #replay: SpeechReplay;
  readonly #replayMs: number;
  /**
   * Set when a stream failed: the next one starts with the replay. After an
   * overload "end" too, but only with what the microphone caught after the end:
   * the audio before it was given up on purpose.
   */
  #replayOnConnect = false;
  #vadSpeaking = false;
  #lastSpeechAt = -Infinity;
  /** Resolved when the events loop has handled a marker, i.e. every word before it. */
  #markerSeen = new Set<() => void>();
  #replayedSamples = 0;
  /** The reconnect episode in progress (see ReconnectContext). */
  #episode: { startedAt: number; retries: number } | undefined;
  /** While a failed stream is being replaced: settles once the new one is open, or the policy gave up. */
  #reopening: { done: Promise<void>; settle: () => void } | undefined;
  #connectedAt = -Infinity;
  #earlierUplinks: UplinkCounts = { admissionRejects: 0, lateArrivals: 0, wouldReject: 0, gapSamples: 0, overloads: 0 };
  #lastUplink: Uplink | undefined;

  constructor(options: SttLinkOptions) {
    this.#o = options;
    this.#now = options.now ?? (() => performance.now());
    this.#replayMs = Math.max(0, options.uplink.replayMs ?? DEFAULTS.uplink.replayMs);
    this.#replay = new SpeechReplay(options.provider.audioFormat.sampleRate, this.#replayMs / 1000);
  }

  /** Opens the first stream; rejects as the provider does (start() then fails). */
  connect(): Promise<void> {
    return this.#open(0);
  }

  /** One uplink frame from the microphone (`capturedAtMs`: see Uplink.push). Never throws. */
  send(pcm: Float32Array | Int16Array, capturedAtMs?: number): void {
    if (this.#replayMs > 0) this.#replay.record(pcm, capturedAtMs);
    try {
      // Judged by its capture time, so the budget bounds the audio's whole age, the main thread's delivery
      // included (README, "Uplink": five sessions on a page busy 50 ms of every 60 ms stay within it).
      this.#current()?.uplink.push(pcm, capturedAtMs);
    } catch {
      // The socket closed under us; the events loop reports it and reconnects.
    }
  }

  /** The VAD's view, for the replay: only recent speech is worth sending again. */
  noteSpeech(speaking: boolean): void {
    this.#vadSpeaking = speaking;
    this.#lastSpeechAt = this.#now();
  }

  /** The session gave the user the floor, `sinceS` after the VAD's onset: the stream may open the turn (SttStream.turnStarted). */
  turnStarted(sinceS: number): void {
    const current = this.#current();
    if (!current?.stream.turnStarted) return;
    try {
      // What the stream writes at once (Gemini's pre-roll: the speech since the onset and a pad)
      // is past audio sent on purpose, not the live audio's backlog: counted as backlog, every
      // barge-in's ~0.8 s of pre-roll overloaded the uplink and ended the stream (bench realtime).
      const before = current.stream.bufferedAmount;
      current.stream.turnStarted(sinceS);
      current.uplink.noteBurst(current.stream.bufferedAmount - before);
    } catch {
      // The socket closed under us; the events loop reports it and reconnects.
    }
  }

  /**
   * Asks the stream for every word of the audio sent so far, and waits until
   * the events loop has handled them. `missed` when it did not come back in
   * `timeoutMs` (or there was an error). While a failed stream is being
   * replaced, it waits for the new one first, within the same `timeoutMs`;
   * with no stream open and none coming there is nothing to wait for.
   */
  async flush(timeoutMs: number): Promise<{ missed: boolean; cause?: unknown }> {
    const limit = timeout(timeoutMs, this.#o.signal);
    let seen: (() => void) | undefined;
    try {
      // The turn ended while its stream was being replaced: its speech goes to the new stream (the replay), so
      // its words come from there. Flushed at once instead, the dead stream (or none) returned nothing, the turn
      // was dropped, and the question asked across a slow reconnect went unanswered (speech-to-speech-faults, in CI).
      const reopening = this.#reopening;
      if (reopening) await abortable<void>((resolve) => void reopening.done.then(resolve), limit.signal);
      const open = this.#current();
      if (!open) return { missed: false };
      const { stream, uplink } = open;
      // The provider's flush resolves when the marker arrives; the words before
      // it are handled once the events loop reaches the marker too.
      const handled = abortable<void>((resolve) => {
        seen = resolve;
        this.#markerSeen.add(resolve);
        return () => this.#markerSeen.delete(resolve);
      }, limit.signal);
      // The audio still queued goes ahead of the provider's end marker (Uplink.sendQueued).
      uplink.sendQueued();
      const before = stream.bufferedAmount;
      const paddedBefore = stream.paddingSamples ?? 0;
      const flushed = stream.flush(limit.signal);
      // The padding is in the service's timeline now (word times count it): the replay's too.
      this.#replay.pad((stream.paddingSamples ?? 0) - paddedBefore);
      // What the flush wrote at once (Kyutai's silence padding) is not the user's backlog:
      // counted as such, a busy page overloaded the uplink at every turn's end (uplink.noteBurst).
      uplink.noteBurst(stream.bufferedAmount - before);
      await Promise.all([flushed, handled]);
      return { missed: false };
    } catch (cause) {
      return { missed: true, cause };
    } finally {
      limit.clear();
      if (seen) this.#markerSeen.delete(seen);
    }
  }

  /**
   * The uplink's metrics: queue figures of the live (or, while reconnecting,
   * the last) stream; reject, gap and overload counts for the whole session.
   */
  get uplinkMetrics(): UplinkMetrics | undefined {
    const live = this.#current()?.uplink;
    if (live && live !== this.#lastUplink) {
      if (this.#lastUplink) {
        const done = this.#lastUplink.metrics;
        for (const key of UPLINK_COUNTS) this.#earlierUplinks[key] += done[key];
      }
      this.#lastUplink = live;
    }
    const current = this.#lastUplink?.metrics;
    if (!current) return undefined;
    const totals = { ...current };
    for (const key of UPLINK_COUNTS) totals[key] += this.#earlierUplinks[key];
    return totals;
  }

  /** Samples sent again to new streams (uplink.replayMs), over the session. */
  get replayedSamples(): number {
    return this.#replayedSamples;
  }

  #current(): OpenStream | undefined {
    return this.#o.quests.get<OpenStream>("stt")?.getNowait();
  }

  /** Opens (or replaces) the "stt" quest. */
  #open(attempts: number): Promise<void> {
    const { provider } = this.#o;
    const quest = new Quest<OpenStream>(
      "stt",
      async (signal) => {
        const stream = await provider.connect(signal, { conversation: this.#o.conversation?.() ?? [] });
        this.#connectedAt = this.#now();
        this.#o.emit({ kind: "connected", attempts });
        // Synchronous up to the uplink being in place: every frame is either replayed or pushed.
        const uplink = this.#makeUplink(stream);
        // A stream that replaces one mid-turn opens the turn first, so that the replayed speech is in it.
        const since = attempts > 0 ? this.#o.openTurn?.() : undefined;
        if (since !== undefined) stream.turnStarted?.(since);
        this.#replayInto(uplink);
        this.#endReopening();
        return { stream, uplink };
      },
      (open, signal) => this.#run(open.stream, signal),
      (open) => {
        open.uplink.close();
        return open.stream.close();
      },
    );
    return this.#o.quests.add(quest).then((q) => q.get().then(() => {}));
  }

  async #run(stream: SttStream, signal: AbortSignal): Promise<void> {
    try {
      for await (const event of stream.events(signal)) {
        if (event.kind === "word") {
          const spokenAtMs = this.#replay.spokenAtMs(event.startS);
          this.#replay.word(event.startS);
          this.#o.emit({ kind: "word", text: event.text, spokenAtMs });
        } else if (event.kind === "word-end") {
          this.#replay.wordEnd(event.stopS);
        } else if (event.kind === "marker") {
          this.#o.emit({ kind: "marker" });
          for (const seen of this.#markerSeen) seen();
        } else if (event.kind === "pause") {
          this.#o.emit({ kind: "pause", probability: event.probability });
        } else if (event.kind === "end-of-turn") {
          this.#o.emit({ kind: "endOfTurn", eager: event.eager, ...(event.text === undefined ? {} : { text: event.text }) });
        } else if (event.kind === "turn-resumed" || event.kind === "speech-start") {
          this.#o.emit({ kind: "turnResumed" });
        } else if (event.kind === "move") {
          // This stream goes on until the new one replaces it (its quest's removal ends this loop).
          void this.#move(event.message, event.withinMs, signal);
        }
      }
    } catch (err) {
      if (isAbort(err) || signal.aborted) return;
      this.#o.emit({ kind: "error", error: err, fatal: false });
      // A fresh stream gets the speech not yet turned into words; the words so far are kept.
      this.#replayOnConnect = true;
      void this.#reconnect("dropped", "speech-to-text stream ended; reconnecting", err);
    }
  }

  /**
   * The service asked for a new stream (SttEvent "move"): open it now, with
   * the replay as after a drop. Not a failure, so not the reconnect policy's
   * to count; a new stream that fails to open is one, and goes to it.
   */
  async #move(message: string, withinMs: number, streamSignal: AbortSignal): Promise<void> {
    const latest = this.#now() + withinMs;
    try {
      while (this.#o.busy?.() && this.#now() < latest) await delay(MOVE_POLL_MS, streamSignal);
    } catch {
      return; // the stream went first (stop(), or a failure the reconnect handles)
    }
    if (this.#o.signal.aborted || streamSignal.aborted) return;
    this.#replayOnConnect = true;
    this.#o.emit({ kind: "reconnecting", attempt: 1, delayMs: 0, reason: "moved", message, cause: undefined });
    await this.#attempt(1);
  }

  /**
   * Replaces the stream after a failure, when and while the policy says so.
   * A reconnect that fails is itself a failure of the episode, retried under
   * the same policy; once the policy gives up, `fatal` ends the session.
   */
  async #reconnect(reason: ReconnectContext["reason"], message: string, fatal: unknown): Promise<void> {
    if (this.#o.signal.aborted) return;
    this.#beginReopening();
    const now = this.#now();
    if (this.#episode && reason !== "connect-failed" && now - this.#connectedAt >= this.#o.policy.stableMs) this.#episode = undefined;
    const episode = (this.#episode ??= { startedAt: now, retries: 0 });
    const delayMs = this.#o.policy.nextRetryDelayMs({ retryCount: episode.retries, elapsedMs: now - episode.startedAt, reason, error: fatal });
    if (delayMs === null) {
      this.#endReopening();
      this.#o.emit({ kind: "error", error: fatal, fatal: true });
      return;
    }
    episode.retries++;
    this.#o.emit({ kind: "reconnecting", attempt: episode.retries, delayMs, reason, message, cause: fatal });
    if (delayMs > 0 && !(await delay(delayMs, this.#o.signal).then(() => true, () => false))) return;
    await this.#attempt(episode.retries);
  }

  #beginReopening(): void {
    if (this.#reopening) return;
    let settle!: () => void;
    const done = new Promise<void>((resolve) => (settle = resolve));
    this.#reopening = { done, settle };
  }

  #endReopening(): void {
    this.#reopening?.settle();
    this.#reopening = undefined;
  }

  /** Opens a new stream; one that fails to open is a failure of the episode, retried under the policy. */
  async #attempt(attempts: number): Promise<void> {
    try {
      await this.#open(attempts);
    } catch (err) {
      if (isAbort(err) || this.#o.signal.aborted) return;
      this.#o.emit({ kind: "error", error: err, fatal: false });
      void this.#reconnect("connect-failed", "speech-to-text reconnect failed; trying again", err);
    }
  }

  /**
   * A new stream after a failure starts with the speech the old one had not
   * turned into words, and what the microphone caught while reconnecting
   * (uplink.replayMs): one bounded burst, sent ahead of the live audio.
   */
  #replayInto(uplink: Uplink): void {
    const wanted = this.#replayOnConnect;
    this.#replayOnConnect = false;
    // The VAD's word, or sound it has not called yet (it decides a frame or more after the onset).
    const recentSpeech = this.#vadSpeaking || this.#now() - this.#lastSpeechAt < this.#replayMs || this.#replay.holdsSound();
    if (!wanted || !recentSpeech) {
      this.#replay.clear();
      return;
    }
    const { frames, reopened, lostSeconds } = this.#replay.rebase();
    if (reopened) this.#o.emit({ kind: "wordRetracted" });
    if (lostSeconds > 0) {
      const lostMs = Math.round(lostSeconds * 1000);
      this.#o.emit({
        kind: "warning",
        message: `the reconnect outlasted uplink.replayMs (${this.#replayMs} ms): ${lostMs} ms of the user's speech before it were not sent again, so its words may be missing; raise uplink.replayMs to keep more`,
      });
    }
    // A burst the uplink does not count against the live audio's budget:
    // otherwise a socket slow to drain it would end the stream it was sent to.
    uplink.sendBurst(frames);
    for (const pcm of frames) this.#replayedSamples += pcm.length;
  }

  #makeUplink(stream: SttStream): Uplink {
    const { provider, uplink: options } = this.#o;
    const uplink = new Uplink(stream, {
      sampleRate: provider.audioFormat.sampleRate,
      bytesPerSample: stream.bytesPerSample,
      budgetMs: options.budgetMs,
      policy: options.policy ?? (provider.supportsGap ? "gap" : "end"),
      observe: options.observe,
    });
    uplink.on("overload", (e) => this.#o.emit({ kind: "overload", ...e }));
    uplink.on("ended", () => {
      // The backlog is given up; the speech caught while reconnecting is not (a start-up
      // overload on a busy page otherwise lost the question asked meanwhile: demo.spec, in CI).
      this.#replay.giveUp();
      this.#replayOnConnect = true;
      void this.#reconnect(
        "overload",
        "the speech-to-text uplink fell behind its latency budget; the stream was ended and is reconnecting",
        new OverloadError("stt: the uplink fell behind its latency budget too often; check the network or raise uplink.budgetMs", { service: "stt" }),
      );
    });
    return uplink;
  }
}
