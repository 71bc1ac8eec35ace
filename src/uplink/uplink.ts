/**
 * Uplink: the one sender of one audio stream, bounded before work piles up.
 *
 * A browser WebSocket has no backpressure: `send()` buffers without limit, so
 * a slow service makes memory and latency grow unseen. The uplink keeps a
 * queue bounded in bytes and in age, and counts `WebSocket.bufferedAmount`
 * against the same budget (default 0.5 s of audio in the wire format):
 *
 *   pending bytes = queued bytes + sink.bufferedAmount ≤ budgetBytes
 *
 * A frame that does not fit is an admission reject. So is a frame older than
 * the budget: age is counted from the frame's capture (`push(pcm, capturedAt)`),
 * not from when it reached the uplink, and it is judged at the moment of
 * sending, so a frame that a busy thread delivered late, or that waited while
 * the retry timer fired late, is never sent past the budget. Either starts an overload, reported once per episode with
 * the `overload` event, and handled by the explicit policy:
 *   - "end": end the stream cleanly (`ended` event); the owner reconnects;
 *   - "gap": skip the audio and send a gap marker carrying the count of
 *     samples skipped, in order, so the service's timeline stays right.
 * PCM is never dropped silently: every sample pushed is sent, counted in a
 * gap, or (after an end) counted in `unsentAfterEndSamples`.
 * `observe: true` sends everything at once (as a naive sender would) and only
 * counts `wouldReject`, for a gradual rollout.
 *
 * Bytes handed to the socket cannot be taken back, so the socket is given at
 * most a quarter of the budget, or three frames if that is more (up to half
 * the budget), or one frame when it is idle; the rest waits in the queue,
 * where the age limit and the policy can still act on it. Three frames,
 * because Chromium lowers `bufferedAmount` in a main-thread task after the
 * bytes left: with one 80 ms Kyutai frame (9.6 kB, more than a quarter of
 * its 60 kB budget's share) a busy page kept each frame waiting for the
 * last one's report, hundreds of ms of queue wait on a healthy loopback
 * link; with room for three it hardly waits (test/browser/uplink-busy.spec.ts).
 *
 * A bounded burst sent on purpose ahead of the live audio (the STT link's
 * replay after a reconnect, `sendBurst`; a flush's padding, `noteBurst`) is
 * not the live audio's backlog: its
 * bytes still in the socket are left out of the pending count while they
 * drain, so the burst alone never starts an overload.
 *
 * At a turn's end the owner calls `sendQueued()` before the provider writes
 * its end marker, so the marker never overtakes the turn's last audio.
 *
 * No promise or task per frame: one queue, one timer while it is non-empty.
 * Pure: no DOM; the sink and the clock are injected.
 */
import { DEFAULTS } from "../defaults.js";
import { ConfigError } from "../errors.js";
import { EventSource } from "../util/emitter.js";
import { UplinkStats, type UplinkMetrics } from "./uplink-stats.js";

export type { UplinkMetrics } from "./uplink-stats.js";
export type OverloadPolicy = "end" | "gap";

/** Where the uplink sends: a provider's stream (SttStream fits). */
export interface UplinkSink {
  /** Sends one frame; returns the bytes it put on the wire. */
  sendAudio(pcm: Float32Array | Int16Array): number;
  /** Bytes accepted by the socket and not yet sent. */
  readonly bufferedAmount: number;
  /** Sends a gap marker; required for the "gap" policy. */
  sendGap?(samples: number): void;
}

export interface UplinkOptions {
  /** Samples per second of the frames pushed. */
  sampleRate: number;
  /** Wire bytes per sample (s16: 2; Kyutai msgpack float32: 5). */
  bytesPerSample: number;
  /** The latency budget, in ms of audio: bounds both bytes and age. Default 500. */
  budgetMs?: number;
  /** What to do past the budget. Default "end". "gap" needs a sink with sendGap. */
  policy?: OverloadPolicy;
  /** Count would-be rejects without enforcing anything. Default false. */
  observe?: boolean;
  /** How often (ms) to retry a stuck queue. Default 10. */
  retryMs?: number;
  /** The clock, in ms; `push`'s `capturedAt` is on it. Default performance.now. */
  now?: () => number;
}

/** The queue went past its budget, in bytes or in the age of its oldest frame; `policy` is what it did ("observe": nothing). */
export interface UplinkOverload {
  policy: OverloadPolicy | "observe";
  pendingBytes: number;
  budgetBytes: number;
  reason: "bytes" | "age";
}

/** The "end" policy ended the stream. */
export interface UplinkEnded {
  reason: "overload";
}

export type UplinkEvents = {
  overload: UplinkOverload;
  ended: UplinkEnded;
};

/** `at`: the frame's capture time on the uplink's clock. */
type Item =
  | { kind: "audio"; pcm: Float32Array | Int16Array; bytes: number; at: number; pushedAt: number }
  | { kind: "gap"; samples: number };

/** What a gap marker is counted as against the budget (a small msgpack/JSON message). */
const GAP_MARKER_BYTES = 32;

export class Uplink extends EventSource<UplinkEvents> {
  readonly budgetBytes: number;
  /** The most the socket's own buffer is given; see the header. */
  readonly #socketHighWater: number;
  readonly #sink: UplinkSink;
  readonly #policy: OverloadPolicy;
  readonly #observe: boolean;
  readonly #budgetMs: number;
  readonly #bytesPerSample: number;
  readonly #retryMs: number;
  readonly #now: () => number;
  readonly #queue: Item[] = [];
  #queuedBytes = 0;
  #audioFrames = 0;
  #timer: ReturnType<typeof setTimeout> | undefined;
  /** Bytes of a burst (sendBurst) that may still be in the socket's buffer. */
  #burstBytes = 0;
  /** When #drain last judged the oldest audio: what it kept was within the budget at that moment. */
  #judgedAt = 0;
  #overloaded = false;
  /** While sendQueued() runs: the socket takes everything, whatever its share. */
  #forcing = false;
  #ended = false;
  #closed = false;
  readonly #m = new UplinkStats();

  constructor(sink: UplinkSink, options: UplinkOptions) {
    super();
    const budgetMs = options.budgetMs ?? DEFAULTS.uplink.budgetMs;
    if (!(budgetMs > 0)) throw new ConfigError(`Uplink: \`budgetMs\` must be > 0, not ${budgetMs}`);
    if (!(options.sampleRate > 0)) throw new ConfigError(`Uplink: \`sampleRate\` must be > 0`);
    if (!(options.bytesPerSample > 0)) throw new ConfigError(`Uplink: \`bytesPerSample\` must be > 0`);
    const policy = options.policy ?? DEFAULTS.uplink.policy;
    if (policy !== "end" && policy !== "gap") throw new ConfigError(`Uplink: \`policy\` must be "end" or "gap", not ${JSON.stringify(policy)}`);
    if (policy === "gap" && !sink.sendGap) {
      throw new ConfigError('Uplink: the "gap" policy needs a stream that can send gap markers; this provider cannot, use "end"');
    }
    this.#sink = sink;
    this.#policy = policy;
    this.#observe = options.observe ?? DEFAULTS.uplink.observe;
    this.#budgetMs = budgetMs;
    this.#bytesPerSample = options.bytesPerSample;
    this.budgetBytes = Math.round((budgetMs / 1000) * options.sampleRate * options.bytesPerSample);
    this.#socketHighWater = Math.floor(this.budgetBytes / 4);
    this.#retryMs = options.retryMs ?? DEFAULTS.uplink.retryMs;
    this.#now = options.now ?? (() => performance.now());
  }


  /** True once the "end" policy ended the stream. */
  get ended(): boolean {
    return this.#ended;
  }

  /**
   * Offers one captured frame. Never blocks, never allocates a promise.
   * `capturedAt`: when its last sample was captured, on the uplink's clock
   * (default: now). A frame that arrives already older than the budget (its
   * delivery was late) is rejected at once, by the policy, and counted.
   */
  push(pcm: Float32Array | Int16Array, capturedAt?: number): void {
    if (this.#closed) return;
    const m = this.#m;
    m.pushedSamples += pcm.length;
    if (this.#ended) {
      m.unsentAfterEndSamples += pcm.length;
      return;
    }
    const now = this.#now();
    const at = capturedAt === undefined || !(capturedAt <= now) ? now : capturedAt;
    const age = now - at;
    m.arrived(age);
    const bytes = pcm.length * this.#bytesPerSample;
    if (this.#observe) {
      const over = age > this.#budgetMs ? "age" : this.#pending() + bytes > this.budgetBytes ? "bytes" : undefined;
      if (over) {
        m.wouldReject++;
        this.#signalOverload(over);
      } else this.#overloaded = false;
      this.#sendAudio(pcm, 0, age);
      this.#track();
      return;
    }
    this.#drain();
    if (this.#ended) {
      m.unsentAfterEndSamples += pcm.length;
      return;
    }
    if (age > this.#budgetMs) {
      m.admissionRejects++;
      m.lateArrivals++;
      m.expired(age);
      this.#reject(pcm.length, "age");
    } else if (this.#pending() + bytes > this.budgetBytes) {
      m.admissionRejects++;
      this.#reject(pcm.length, "bytes");
    } else {
      this.#queue.push({ kind: "audio", pcm, bytes, at, pushedAt: now });
      this.#queuedBytes += bytes;
      this.#audioFrames++;
      this.#drain();
    }
    this.#track();
    this.#schedule();
  }

  /**
   * Sends `frames` at once, ahead of anything pushed after: a bounded burst
   * the owner chose to send (the replay of speech a failed stream lost). Its
   * bytes are not counted against the budget while the socket drains them;
   * the live audio behind it is, as usual. Not counted in `pushedSamples` or
   * `sentSamples` (the owner counts what it replays), and not judged by age
   * (it is old on purpose).
   */
  sendBurst(frames: ReadonlyArray<Float32Array | Int16Array>): void {
    if (this.#closed || this.#ended) return;
    this.#liveBuffered(); // what is left of an earlier burst
    for (const pcm of frames) this.#burstBytes += this.#sink.sendAudio(pcm) || pcm.length * this.#bytesPerSample;
  }

  /**
   * Counts `bytes` the owner wrote to the socket itself, outside the queue, as
   * a burst like sendBurst's. A Kyutai flush pads with 0.5 s of silence (60 kB,
   * the whole budget): counted as backlog, the first frame after a turn's end
   * overloaded whenever the browser reported those bytes sent a frame late.
   */
  noteBurst(bytes: number): void {
    if (this.#closed || this.#ended || !(bytes > 0)) return;
    this.#liveBuffered(); // what is left of an earlier burst
    this.#burstBytes += bytes;
  }

  /**
   * Hands every queued item to the socket now, whatever its share (age and policy still apply), for a turn's end:
   * the provider writes its end marker (commit, activityEnd) to the socket itself, behind the audio. Without this,
   * under load the last word was still queued when the marker went out ("can you help me" heard as "… her own").
   */
  sendQueued(): void {
    if (this.#closed || this.#ended) return;
    this.#forcing = true;
    try {
      this.#drain();
    } finally {
      this.#forcing = false;
    }
    this.#track();
  }

  /** Stops the retry timer; queued audio is abandoned and counted as unsent. */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#abandonQueue();
  }

  /** Queued bytes plus the socket's bufferedAmount, now; cheaper than `metrics` (no sort), for per-frame polling. */
  get pendingBytes(): number {
    return this.#pending();
  }

  /** Audio frames waiting in the queue now; cheaper than `metrics`. */
  get pendingFrames(): number {
    return this.#audioFrames;
  }

  get metrics(): UplinkMetrics {
    return this.#m.snapshot({
      budgetBytes: this.budgetBytes,
      pendingBytes: this.#pending(),
      pendingFrames: this.#audioFrames,
      oldestFrameAgeMs: this.#oldestAge(this.#now()),
    });
  }

  #pending(): number {
    return this.#queuedBytes + this.#liveBuffered();
  }

  /**
   * The socket's buffered bytes less what is left of a burst. The socket
   * sends in order, so the burst leaves first: once the buffer holds less
   * than the burst, all of it is burst.
   */
  #liveBuffered(): number {
    const buffered = this.#sink.bufferedAmount;
    if (this.#burstBytes > buffered) this.#burstBytes = buffered;
    return buffered - this.#burstBytes;
  }

  #oldestAge(now: number): number {
    const front = this.#queue.find((i) => i.kind === "audio");
    return front && front.kind === "audio" ? now - front.at : 0;
  }

  /** True when the socket may take `bytes` more now: it is idle, or stays under its share. */
  #socketHasRoom(bytes: number): boolean {
    if (this.#forcing) return true;
    const buffered = this.#liveBuffered();
    const share = Math.max(this.#socketHighWater, Math.min(3 * bytes, this.budgetBytes / 2));
    return buffered === 0 || buffered + bytes <= share;
  }

  /**
   * Sends queued items in order while the socket has room (see
   * #socketHasRoom). The oldest audio is judged against the clock at each
   * step, just before it would be sent: past the budget, it is rejected
   * instead, so no frame goes out older than the budget however late this runs.
   */
  #drain(): void {
    const queue = this.#queue;
    while (queue.length && !this.#ended) {
      // Gap markers that meet at the front (an expiry's and an admission reject's) are one gap.
      while (queue[0].kind === "gap" && queue[1]?.kind === "gap") {
        queue[0].samples += queue[1].samples;
        queue.splice(1, 1);
      }
      // The oldest audio is first, or right behind the gap marker it will join.
      const index = queue[0].kind === "gap" ? 1 : 0;
      const oldest = queue[index];
      if (oldest?.kind === "audio") {
        const age = (this.#judgedAt = this.#now()) - oldest.at;
        if (age > this.#budgetMs) {
          this.#expire(index, age);
          continue;
        }
      }
      const item = queue[0];
      if (item.kind === "gap") {
        // Held back until the audio after it can go too: while the socket is
        // stuck the marker keeps growing, so an episode is one marker, not one per frame.
        const next = queue[1];
        // A trailing marker goes too when the queue is sent whole (sendQueued): the audio it stands for came before the turn's end.
        if (!next && !this.#forcing) break;
        if (next && !this.#socketHasRoom(GAP_MARKER_BYTES + (next.kind === "audio" ? next.bytes : GAP_MARKER_BYTES))) break;
        queue.shift();
        this.#sink.sendGap!(item.samples);
        continue;
      }
      if (!this.#socketHasRoom(item.bytes)) break;
      // Judged again at the very moment of sending: reading bufferedAmount takes time too.
      const now = this.#now();
      if (now - item.at > this.#budgetMs) {
        this.#expire(0, now - item.at);
        continue;
      }
      queue.shift();
      this.#queuedBytes -= item.bytes;
      this.#audioFrames--;
      this.#sendAudio(item.pcm, now - item.pushedAt, now - item.at);
    }
    // The overload episode is over once the backlog (and any gap marker) has
    // gone out. Not when one frame is admitted or sent: a stalled queue admits
    // and expires frames, a slow link sends one now and then, and either is one
    // long episode, not one per frame.
    if (queue.length === 0) this.#overloaded = false;
  }

  /** Queued audio older than the budget is past saving: it counts as a reject. */
  #expire(index: number, age: number): void {
    const [item] = this.#queue.splice(index, 1);
    if (item.kind !== "audio") return;
    this.#m.expired(age);
    this.#queuedBytes -= item.bytes;
    this.#audioFrames--;
    this.#m.admissionRejects++;
    this.#reject(item.pcm.length, "age", true);
  }

  #sendAudio(pcm: Float32Array | Int16Array, waitedMs: number, ageMs: number): void {
    this.#sink.sendAudio(pcm);
    this.#m.sentSamples += pcm.length;
    this.#m.waits.add(waitedMs);
    this.#m.judged(ageMs);
  }

  /** `atFront`: the skipped samples come before everything still queued. */
  #reject(samples: number, reason: "bytes" | "age", atFront = false): void {
    this.#signalOverload(reason);
    if (this.#policy === "end") {
      this.#m.unsentAfterEndSamples += samples;
      this.#end();
      return;
    }
    // Counted when skipped, not when the marker goes out: pushed = sent + gap + unsent + queued audio, always.
    this.#m.gapSamples += samples;
    const neighbour = atFront ? this.#queue[0] : this.#queue[this.#queue.length - 1];
    if (neighbour?.kind === "gap") neighbour.samples += samples;
    else if (atFront) this.#queue.unshift({ kind: "gap", samples });
    else this.#queue.push({ kind: "gap", samples });
  }

  #signalOverload(reason: "bytes" | "age"): void {
    if (this.#overloaded) return;
    this.#overloaded = true;
    this.#m.overloads++;
    this.emit("overload", {
      policy: this.#observe ? "observe" : this.#policy,
      pendingBytes: this.#pending(),
      budgetBytes: this.budgetBytes,
      reason,
    });
  }

  #end(): void {
    if (this.#ended) return;
    this.#ended = true;
    this.#abandonQueue();
    clearTimeout(this.#timer);
    this.#timer = undefined;
    this.emit("ended", { reason: "overload" });
  }

  #abandonQueue(): void {
    for (const item of this.#queue.splice(0)) {
      if (item.kind === "audio") this.#m.unsentAfterEndSamples += item.pcm.length;
    }
    this.#queuedBytes = 0;
    this.#audioFrames = 0;
  }

  /** After each run: what is pending, and the age of the audio it kept (all within the budget, #drain just judged it). */
  #track(): void {
    const m = this.#m;
    m.pendingBytesMax = Math.max(m.pendingBytesMax, this.#pending());
    m.judged(this.#oldestAge(this.#judgedAt));
  }

  /** One timer at most, and only while something waits in the queue. */
  #schedule(): void {
    // Only queued audio needs the timer (to go out or expire); a lone gap marker waits for the next push.
    if (this.#timer !== undefined || this.#audioFrames === 0 || this.#ended || this.#closed) return;
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      this.#drain();
      this.#track();
      this.#schedule();
    }, this.#retryMs);
  }
}
