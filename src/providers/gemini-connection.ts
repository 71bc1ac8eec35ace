/**
 * One Gemini Live WebSocket (a SessionConnection, s2s-connection.ts): the
 * handshake (setup → setupComplete) and the router of every server event to
 * its one reader:
 * - the input side (`sttEvents`): the user's input transcription as words,
 *   and the marker a `flush` waits for, in order;
 * - the model's turn in progress (a Generation): its output transcription
 *   and tool calls to the reply's text stream (`respond`), its audio to the
 *   reply's audio sink. A generation starts with the first model content
 *   after the last one ended (turnComplete, interrupted, or a toolCall), so
 *   content the service sends before the session asks for the reply (it
 *   answers an activityEnd on its own) waits in the generation.
 * A socket that closes, or a frame that breaks the protocol, fails every
 * reader with that error (the STT link then reconnects under its policy). A
 * close with a reason (the service closes 1007 on a bad token or message)
 * becomes a ProtocolError quoting it.
 *
 * The activity: with client turn detection, audio outside an activity is not
 * sent (the service would drop it) but kept, the last PREROLL_KEEP_S of it;
 * `startActivity(sinceS)` sends activityStart and then the last `sinceS` +
 * PREROLL_PAD_S of that audio, so the turn's first syllables are in it.
 *
 * Thread: main. Owner: the geminiLive provider (one connection at a time).
 */
import { BargeinError, ConnectionClosedError } from "../errors.js";
import { GoAwayNotice } from "./go-away.js";
import { abortable } from "../util/abort.js";
import { AsyncQueue } from "../util/async-queue.js";
import type { MessageSocket } from "./message-socket.js";
import { PreRoll } from "./pre-roll.js";
import * as wire from "./gemini-wire.js";
import { SessionConnection, openSession } from "./s2s-connection.js";
import type { AudioSink, PendingTurn } from "./speech-to-speech.js";
import type { LlmOutput, ToolDefinition } from "./types.js";
import type { Claim, ConnectionOptions, Generation } from "./gemini-types.js";

export type { ConnectionOptions } from "./gemini-types.js";

export { SERVICE, closeError } from "./gemini-wire.js";
import { SERVICE, closeError } from "./gemini-wire.js";
/** Audio kept while no activity is open, for the next activity's start. */
const PREROLL_KEEP_S = 3;
/** Audio before the VAD's onset that goes with it (the VAD starts a little after the speech). */
export const PREROLL_PAD_S = 0.3;
/** How long a flush waits for the turn's input transcription once the model has answered, ms. */
const TRANSCRIPT_WAIT_MS = 1500;

export class GeminiConnection extends SessionConnection<wire.GeminiEvent[]> {
  readonly #o: ConnectionOptions;
  readonly #flushes: Array<{ resolve(): void; reject(e: unknown): void }> = [];
  #generation: Generation | undefined;
  #generations = 0;
  /** The reply round waiting for the next generation. */
  #next: Claim | undefined;
  /** Model turns asked for (activityEnd, a typed turn, tool results) whose turnComplete has not come. */
  #owed = 0;
  /** The model was told its turn was cut before any of it came: its content, up to its end, is stale. */
  #staleNext = false;
  /** The last turn end was `interrupted`: the turnComplete after it is that turn's. */
  #interruptedTurn = false;
  /** Armed when the model answered before the turn's input transcription came (see #answeredByModel). */
  #transcriptWait: ReturnType<typeof setTimeout> | undefined;
  /** The model's current generation began after the last user turn (it answers it). */
  #activity = false;
  /** An audio user turn ended since the last reply: the service has it already. */
  #userAudio = false;
  readonly #preroll = new PreRoll(wire.GEMINI_INPUT_RATE, PREROLL_KEEP_S);
  #audioMs = 0;
  #tools: string;
  readonly #answered = new Set<string>();
  /** After a goAway: the move to a new socket, asked for once the wire is quiet (go-away.ts). */
  #goAway: GoAwayNotice | undefined;

  private constructor(socket: MessageSocket<wire.GeminiEvent[]>, options: ConnectionOptions) {
    super(socket);
    this.#o = options;
    this.#tools = JSON.stringify(options.config.tools ?? []);
  }

  /** Opens the socket, sends setup and waits for setupComplete. */
  static async open(options: ConnectionOptions, signal?: AbortSignal): Promise<GeminiConnection> {
    const socket = await openSession<wire.GeminiEvent[]>(
      {
        ...options,
        service: SERVICE,
        decode: wire.decodeGeminiMessage,
        started: "complete the setup … (setupComplete)",
        async handshake(socket, signal) {
          socket.send(JSON.stringify(wire.setupMessage(options.config)));
          for (;;) {
            const next = await socket.next(signal);
            if (next.done) throw new ConnectionClosedError(`${SERVICE}: ${options.safeUrl} closed before setupComplete`, { service: SERVICE, url: options.safeUrl });
            if (next.value.some((e) => e.type === "setupComplete")) return;
          }
        },
        // A close with a reason (1007: a bad token or message) says more than the read that failed.
        failure: (err, closed, ctx) => (closed && closeError(closed, ctx, "at setup")) ?? err,
      },
      signal,
    );
    return new GeminiConnection(socket, options).started();
  }

  get activityOpen(): boolean {
    return this.#activity;
  }

  #clientDetection(): boolean {
    return this.#o.config.turnDetection === "client";
  }

  /** Sends the audio, or (client detection, no activity open) keeps it for the next activity's pre-roll. */
  sendAudio(pcm: Float32Array | Int16Array): number {
    // The stream's clock counts all audio handed to it, held or sent (SpeechReplay maps startS on it):
    // counted when sent, it lagged, and later turns' words read as echo from before the utterance.
    this.#audioMs += (pcm.length / wire.GEMINI_INPUT_RATE) * 1000;
    return this.#write(pcm);
  }

  #write(pcm: Float32Array | Int16Array): number {
    if (this.#clientDetection() && !this.#activity) {
      this.#preroll.push(pcm);
      return 0;
    }
    return this.socket.send(JSON.stringify(wire.audioInput(pcm)));
  }

  /**
   * A user turn begins (client detection): activityStart, then the audio of
   * the last `sinceS` + PREROLL_PAD_S seconds. No-op while one is open.
   */
  startActivity(sinceS: number): void {
    if (!this.#clientDetection() || this.#activity || !this.isOpen) return;
    this.#activity = true;
    this.send(wire.activityStart());
    // Audio the stream's clock has counted already (sendAudio): written, not counted again.
    for (const pcm of this.#preroll.take(sinceS + PREROLL_PAD_S)) this.#write(pcm);
  }

  /**
   * The end of the user's turn: activityEnd (client detection), then resolves
   * once the service answered it (its input transcription, its first model
   * content, or its turnComplete), after the words of the transcription. With
   * server detection the service ends the turn itself; this waits for its
   * answer the same way. No open activity: nothing to wait for.
   */
  flush(signal?: AbortSignal): Promise<void> {
    if (this.#clientDetection()) {
      if (!this.#activity) {
        this.marker();
        return Promise.resolve();
      }
      this.#activity = false;
      this.send(wire.activityEnd());
      this.#owed++;
    }
    // The turn is the user's audio: the service has it, and answers it by itself.
    this.#userAudio = true;
    return abortable<void>((resolve, reject) => {
      const waiter = { resolve, reject };
      this.#flushes.push(waiter);
      return () => {
        const at = this.#flushes.indexOf(waiter);
        if (at >= 0) this.#flushes.splice(at, 1);
      };
    }, signal);
  }

  /**
   * One reply round: sends what the service does not have yet (tool results;
   * a typed user turn), then yields the model's output transcription and,
   * last, its tool calls. The audio goes to `sink`. The round reads the
   * generation under way that no reply took yet (the service answers an
   * activityEnd by itself), or else the next one. Aborting drops the rest of
   * the round (the Live API has no cancel; a cut is told by `tellHeard`).
   */
  async *respond(
    turn: PendingTurn & { tools: readonly ToolDefinition[] },
    sink: AudioSink | undefined,
    signal?: AbortSignal,
  ): AsyncGenerator<LlmOutput, void, undefined> {
    signal?.throwIfAborted();
    const tools = JSON.stringify(turn.tools);
    if (tools !== this.#tools) {
      this.#tools = tools;
      // The setup cannot change on an open socket (the reference); the next connection takes them.
      this.#o.onError(new BargeinError(`${SERVICE}: the session's tools changed; the Live API takes tools only in the setup, so they apply from the next connection`, { service: SERVICE, url: this.ctx.url }));
    }
    const outputs = turn.toolOutputs.filter((o) => !this.#answered.has(o.callId));
    for (const o of outputs) this.#answered.add(o.callId);
    const typed = !outputs.length && !!turn.userText && !this.#userAudio;
    this.#userAudio = false;
    const claim: Claim = { text: new AsyncQueue(), sink, dropped: false };
    const pending = this.#generation;
    if (!outputs.length && !typed && pending && !pending.claim && !pending.stale) this.#bind(pending, claim);
    else {
      // What is under way unclaimed now answers nothing we will read.
      if (pending && !pending.claim) pending.stale = true;
      this.#next = claim;
      if (outputs.length) this.send(wire.toolResponse(outputs.map((o) => ({ id: o.callId, name: o.name ?? "", output: o.output }))));
      if (typed) this.send(wire.userTurn(turn.userText!, true));
      // Owed for what this round asked (client detection owed an audio turn at its activityEnd): counted
      // twice, a later cut took the next turn for an owed one and marked it stale, and it never played.
      if (outputs.length || typed || !this.#clientDetection()) this.#owed++;
    }
    try {
      yield* claim.text.iterate(signal);
      signal?.throwIfAborted();
    } finally {
      if (!claim.text.closed || signal?.aborted) this.#drop(claim);
    }
  }

  /** Drops the rest of the reply whose audio goes to `sink` (a cut or abandoned reply). */
  drop(sink: AudioSink): void {
    const g = this.#generation;
    const claim = g?.claim?.sink === sink ? g.claim : this.#next?.sink === sink ? this.#next : undefined;
    if (claim) this.#drop(claim);
  }

  #drop(claim: Claim): void {
    if (claim.dropped) return;
    claim.dropped = true;
    claim.sink = undefined;
    claim.text.end();
    if (this.#next === claim) this.#next = undefined;
  }

  /** A generation is under way (or awaited) whose audio goes to `sink`. */
  feeds(sink: AudioSink): boolean {
    const g = this.#generation;
    if (this.#next?.sink === sink) return true;
    return g?.claim?.sink === sink && !g.ended && !g.claim.dropped;
  }

  /**
   * Tells the model what the user heard of its interrupted turn: a
   * clientContent turn that asks for no reply (it interrupts the model's
   * generation, the reference says); whatever is still under way is stale.
   */
  tellHeard(heard: string): void {
    const g = this.#generation;
    if (g && !g.ended) g.stale = true;
    // A turn the service owes and has not begun to send: what it sends of it before its end is stale too.
    else if (this.#owed > 0) this.#staleNext = true;
    this.send(wire.userTurn(wire.heardNote(heard), false));
  }

  /** Puts the conversation so far into this new socket's empty context (no reply asked for). */
  restoreContext(turns: ReadonlyArray<{ role: "user" | "model"; text: string }>): void {
    if (turns.length > 0) this.send(wire.contextTurns(turns));
  }

  /** The wire is quiet: no user turn open, no model turn owed or under way. */
  #quiet(): boolean {
    return !this.#activity && this.#owed === 0 && this.#next === undefined && (this.#generation === undefined || this.#generation.ended);
  }

  override close(): Promise<void> {
    clearTimeout(this.#transcriptWait);
    this.#goAway?.dispose();
    return super.close();
  }

  /** The service answered the user's turn: every flush waiting resolves after a marker. */
  #answeredTurn(): void {
    clearTimeout(this.#transcriptWait);
    this.#transcriptWait = undefined;
    for (const waiter of this.#flushes.splice(0)) {
      this.marker();
      waiter.resolve();
    }
  }

  /**
   * The model answered before the turn's input transcription (the docs promise no order): a flush
   * resolved now ends the turn with no words, and the answer never plays. Wait for it a little.
   */
  #answeredByModel(): void {
    if (this.#flushes.length === 0 || this.#transcriptWait !== undefined) return;
    this.#transcriptWait = setTimeout(() => this.#answeredTurn(), TRANSCRIPT_WAIT_MS);
  }

  /** The generation content goes to: the open one, or a new one (which the waiting reply claims). */
  #current(): Generation {
    const open = this.#generation;
    if (open && !open.ended) return open;
    const g: Generation = { index: ++this.#generations, early: [], claim: undefined, stale: this.#staleNext, calls: [], ended: false };
    this.#generation = g;
    const next = this.#next;
    this.#next = undefined;
    if (next) this.#bind(g, next);
    return g;
  }

  #bind(g: Generation, claim: Claim): void {
    g.claim = claim;
    for (const e of g.early.splice(0)) {
      if (e.kind === "text") {
        claim.sink?.transcript(e.delta);
        claim.text.push(e.delta);
      } else claim.sink?.audio(String(g.index), e.pcm);
    }
    if (g.ended) this.#finish(g);
  }

  /** Ends a claimed generation's text (with its tool calls, or its audio's end). */
  #finish(g: Generation): void {
    const claim = g.claim;
    if (!claim || claim.dropped) return;
    if (g.calls.length) claim.text.push({ kind: "toolCalls", calls: g.calls });
    else claim.sink?.done();
    claim.text.end();
  }

  protected receive(events: wire.GeminiEvent[]): void {
    for (const e of events) this.#route(e);
    if (this.#quiet()) this.#goAway?.quiet();
  }

  /** A close with a reason (1007) is the failure, quoting it. */
  protected override async failureOf(err: unknown): Promise<unknown> {
    const info = await Promise.race([this.socket.closed, new Promise<undefined>((r) => setTimeout(() => r(undefined), 0))]);
    return (info && closeError(info, this.ctx, "")) ?? err;
  }

  protected failReaders(failure: unknown): void {
    clearTimeout(this.#transcriptWait);
    for (const f of this.#flushes.splice(0)) f.reject(failure);
    for (const claim of [this.#generation?.claim, this.#next]) {
      if (!claim) continue;
      if (!claim.text.closed) claim.text.fail(failure);
      claim.sink?.fail(failure);
    }
  }

  #route(e: wire.GeminiEvent): void {
    switch (e.type) {
      case "inputTranscription": {
        const startS = this.#audioMs / 1000;
        for (const text of e.text.split(/\s+/).filter(Boolean)) this.stt.push({ kind: "word", text, startS });
        // The turn's words are in: the session may start its reply (and think) while the model thinks.
        // Words that come later join the turn as late words (the docs promise no order).
        return this.#answeredTurn();
      }
      case "outputTranscription":
      case "audio": {
        const g = this.#current();
        if (g.stale) return;
        this.#answeredByModel();
        const claim = g.claim;
        if (!claim) return void g.early.push(e.type === "audio" ? { kind: "audio", pcm: e.pcm } : { kind: "text", delta: e.text });
        if (claim.dropped) return;
        if (e.type === "audio") return claim.sink?.audio(String(g.index), e.pcm);
        claim.sink?.transcript(e.text);
        return claim.text.push(e.text);
      }
      case "toolCall": {
        this.#owed = Math.max(0, this.#owed - 1); // the round ends; the toolResponse asks for the next
        const g = this.#current();
        if (!g.stale) this.#answeredByModel();
        g.calls.push(...e.calls.map((c) => ({ id: c.id, name: c.name, rawArguments: c.arguments })));
        g.ended = true;
        return this.#finish(g);
      }
      case "interrupted":
      case "turnComplete": {
        const g = this.#generation;
        // "interrupted > turn_complete" (the SDKs' LiveServerContent): that turnComplete ends the interrupted turn.
        const endsInterrupted = e.type === "turnComplete" && this.#interruptedTurn;
        this.#interruptedTurn = e.type === "interrupted";
        if (e.type === "turnComplete") {
          this.#owed = Math.max(0, this.#owed - 1);
          this.#staleNext = false;
        }
        if (!g || g.ended) {
          // A turnComplete with no content: the service's (empty) answer to the user's turn.
          if (e.type === "turnComplete" && !endsInterrupted) this.#answeredByModel();
          return;
        }
        if (!g.stale) this.#answeredByModel();
        g.ended = true;
        return this.#finish(g);
      }
      case "toolCallCancellation":
        // The model gave up calls it asked for (the user spoke over them); their results would be ignored.
        for (const id of e.ids) this.#answered.add(id);
        return;
      case "goAway":
        // The session moves to a new socket (the conversation goes with it), at a quiet moment.
        if (this.#goAway || this.closing) return;
        this.#goAway = new GoAwayNotice(e.timeLeft, (move) => !this.closing && this.stt.push(move));
        if (this.#quiet()) this.#goAway.quiet();
        return;
      default:
        return;
    }
  }
}
