// Applies the fault knobs to one WebSocket stream: drop (destroy the TCP socket
// with no close frame), stall (stop reading, and the service stops sending), and
// a read-rate limit (a slow uplink). Reads are stopped by pausing the raw
// net.Socket under `ws`, so the kernel buffers fill and the client really sees
// backpressure (its `bufferedAmount` grows once they are full).
import { StallWindow } from "./knobs.mjs";

/** Streams kept in `recentSends`, and send times kept per stream. */
const RECENT_STREAMS = 16;
const SENDS_PER_STREAM = 4096;

/**
 * When each of the last few streams sent each message (Date.now(), in order), newest last: a test of
 * the stall knobs in the backend's own process judges the gaps by the server's clock. On the client's
 * side, under load, messages sent before a stall arrived late and made its gap look shorter.
 * @type {number[][]}
 */
export const recentSends = [];

export class SocketFaults {
  /**
   * @param {import("ws").WebSocket} ws
   * @param {import("./knobs.mjs").Knobs} knobs
   * @param {{ onDrop?: () => void }} [hooks]
   */
  constructor(ws, knobs, hooks = {}) {
    this.ws = ws;
    this.knobs = knobs;
    this.hooks = hooks;
    this.stall = new StallWindow(knobs);
    this.sent = 0;
    /** @type {number[]} */
    this.sentAt = [];
    recentSends.push(this.sentAt);
    if (recentSends.length > RECENT_STREAMS) recentSends.shift();
    this.dropped = false;
    /** @type {NodeJS.Timeout[]} */
    this.timers = [];
    /** Reasons the reads are paused; reads resume when none is left. */
    this.readHolds = new Set();
    /** @type {import("node:net").Socket} */
    this.raw = /** @type {any} */ (ws)._socket;

    if (knobs.dropAfterMs !== undefined) this.later(knobs.dropAfterMs, () => this.drop());
    if (knobs.stallMs && knobs.stallAfter === undefined) this.holdReadsInStall();
    if (knobs.rateBps) this.limitReadRate(knobs.rateBps);
  }

  /** Stops reading for the stall window (sends wait it out themselves: StallWindow.waitIfStalled). */
  holdReadsInStall() {
    this.later(this.stall.start - Date.now(), () => this.holdReads("stall"));
    this.later(this.stall.end - Date.now(), () => this.releaseReads("stall"));
  }

  /** @param {number} ms @param {() => void} fn */
  later(ms, fn) {
    this.timers.push(setTimeout(fn, Math.max(0, ms)));
  }

  /** @param {string} reason */
  holdReads(reason) {
    this.readHolds.add(reason);
    this.raw?.pause();
  }

  /** @param {string} reason */
  releaseReads(reason) {
    this.readHolds.delete(reason);
    if (this.readHolds.size === 0 && !this.dropped) this.raw?.resume();
  }

  /**
   * A slow uplink: bytes reach the WebSocket parser at most `bps` per second.
   * The `ws` data listeners are moved behind a queue that releases 20 ms slices
   * on a virtual clock (idle time earns no credit); past 16 kB queued the socket
   * stops reading, so the kernel buffers and then the client's send buffer fill.
   * Must run before the first byte after the upgrade is read (the services
   * construct SocketFaults synchronously in the upgrade callback).
   * @param {number} bps
   */
  limitReadRate(bps) {
    const raw = this.raw;
    if (!raw) return;
    const HIGH_WATER = 16 * 1024;
    const deliver = raw.listeners("data");
    for (const listener of deliver) raw.removeListener("data", /** @type {any} */ (listener));
    /** @type {Buffer[]} */
    const queue = [];
    let queued = 0;
    let readyAt = Date.now();
    /** @type {NodeJS.Timeout | null} */
    let timer = null;
    const slice = Math.max(256, Math.round(bps / 50));
    // Once the TCP socket is closed, ws has finished with its parser: bytes still
    // queued here would reach it out of order ("RSV2 and RSV3 must be clear").
    let closed = false;
    raw.once("close", () => {
      closed = true;
      queue.length = 0;
      queued = 0;
      if (timer) clearTimeout(timer);
      timer = null;
    });
    const pump = () => {
      timer = null;
      while (queue.length > 0 && !this.dropped && !closed) {
        const now = Date.now();
        if (readyAt > now + 1) {
          timer = setTimeout(pump, readyAt - now);
          this.timers.push(timer);
          return;
        }
        let chunk = queue[0];
        if (chunk.length > slice) {
          queue[0] = chunk.subarray(slice);
          chunk = chunk.subarray(0, slice);
        } else queue.shift();
        queued -= chunk.length;
        readyAt = Math.max(readyAt, now) + (chunk.length / bps) * 1000;
        for (const listener of deliver) listener.call(raw, chunk);
        if (queued < HIGH_WATER) this.releaseReads("rate");
      }
    };
    raw.on("data", (/** @type {Buffer} */ chunk) => {
      queue.push(chunk);
      queued += chunk.length;
      if (queued >= HIGH_WATER) this.holdReads("rate");
      if (!timer) pump();
    });
  }

  /**
   * Sends one message unless the stream was dropped; drops it after `dropAfter` messages, and stalls
   * after `stallAfter` (with `stallMs`).
   * @param {Uint8Array | string} data
   */
  send(data) {
    if (this.dropped || this.ws.readyState !== this.ws.OPEN) return false;
    this.ws.send(data);
    this.sent++;
    if (this.sentAt.length < SENDS_PER_STREAM) this.sentAt.push(Date.now());
    if (this.knobs.dropAfter !== undefined && this.sent >= this.knobs.dropAfter) this.drop();
    else if (this.knobs.stallMs && this.sent === this.knobs.stallAfter) {
      this.stall.begin();
      this.holdReadsInStall();
    }
    return true;
  }

  /** Destroys the TCP socket without a close frame (a network failure, not a close). */
  drop() {
    if (this.dropped) return;
    this.dropped = true;
    this.hooks.onDrop?.();
    this.ws.terminate();
  }

  dispose() {
    for (const t of this.timers) clearTimeout(t);
    this.timers = [];
  }
}
