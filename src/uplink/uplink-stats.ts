/**
 * The Uplink's counters and its public metrics shape: what was pushed, sent,
 * skipped in gaps or left unsent, and how old audio was at each point the
 * uplink looked at it. Pure, allocation-free per frame (fixed windows).
 */

export interface UplinkMetrics {
  budgetBytes: number;
  /** Queued bytes plus the socket's bufferedAmount. */
  pendingBytes: number;
  /** The highest pendingBytes seen. */
  pendingBytesMax: number;
  pendingFrames: number;
  /** p95 of the time frames waited in the queue (ms), over the last 256 frames sent. */
  queueWaitMsP95: number;
  /** Age (since capture) of the oldest frame queued now; it may pass the budget until the uplink next runs. */
  oldestFrameAgeMs: number;
  /**
   * The oldest age (since capture) of any audio the uplink sent or kept, judged
   * each time it ran (a push, its retry timer, a send). Audio older than the
   * budget is never sent, so this stays within `budgetMs`.
   */
  oldestFrameAgeMsMax: number;
  /**
   * How old the oldest frame that expired was when the uplink found it (0 if
   * none did). Past the budget by how late the uplink got to look: a busy
   * thread that delays its timer or the frames' delivery.
   */
  expiredFrameAgeMsMax: number;
  /** p95 and max of how old frames were when they reached the uplink (capture to push, over the last 256): the delivery delay. */
  arrivalAgeMsP95: number;
  arrivalAgeMsMax: number;
  admissionRejects: number;
  /** Of the admission rejects, the frames that were already older than the budget when they arrived. */
  lateArrivals: number;
  wouldReject: number;
  gapSamples: number;
  sentSamples: number;
  pushedSamples: number;
  unsentAfterEndSamples: number;
  overloads: number;
}

const WINDOW = 256;

/** A fixed window of the latest values, for a p95 without keeping every frame. */
class RecentWindow {
  readonly #values = new Float64Array(WINDOW);
  #count = 0;
  add(value: number): void {
    this.#values[this.#count++ % WINDOW] = value;
  }
  p95(): number {
    const n = Math.min(this.#count, WINDOW);
    if (n === 0) return 0;
    const sorted = Array.from(this.#values.subarray(0, n)).sort((a, b) => a - b);
    return sorted[Math.min(n - 1, Math.ceil(0.95 * n) - 1)];
  }
}

/** The counters behind UplinkMetrics; the Uplink owns one. */
export class UplinkStats {
  readonly waits = new RecentWindow();
  readonly arrivals = new RecentWindow();
  pendingBytesMax = 0;
  oldestFrameAgeMsMax = 0;
  expiredFrameAgeMsMax = 0;
  arrivalAgeMsMax = 0;
  admissionRejects = 0;
  lateArrivals = 0;
  wouldReject = 0;
  gapSamples = 0;
  sentSamples = 0;
  pushedSamples = 0;
  unsentAfterEndSamples = 0;
  overloads = 0;

  arrived(ageMs: number): void {
    this.arrivals.add(ageMs);
    if (ageMs > this.arrivalAgeMsMax) this.arrivalAgeMsMax = ageMs;
  }

  /** Audio of this age was sent, or kept after a check. */
  judged(ageMs: number): void {
    if (ageMs > this.oldestFrameAgeMsMax) this.oldestFrameAgeMsMax = ageMs;
  }

  expired(ageMs: number): void {
    if (ageMs > this.expiredFrameAgeMsMax) this.expiredFrameAgeMsMax = ageMs;
  }

  snapshot(live: { budgetBytes: number; pendingBytes: number; pendingFrames: number; oldestFrameAgeMs: number }): UplinkMetrics {
    return {
      budgetBytes: live.budgetBytes,
      pendingBytes: live.pendingBytes,
      pendingBytesMax: this.pendingBytesMax,
      pendingFrames: live.pendingFrames,
      queueWaitMsP95: this.waits.p95(),
      oldestFrameAgeMs: live.oldestFrameAgeMs,
      oldestFrameAgeMsMax: this.oldestFrameAgeMsMax,
      expiredFrameAgeMsMax: this.expiredFrameAgeMsMax,
      arrivalAgeMsP95: this.arrivals.p95(),
      arrivalAgeMsMax: this.arrivalAgeMsMax,
      admissionRejects: this.admissionRejects,
      lateArrivals: this.lateArrivals,
      wouldReject: this.wouldReject,
      gapSamples: this.gapSamples,
      sentSamples: this.sentSamples,
      pushedSamples: this.pushedSamples,
      unsentAfterEndSamples: this.unsentAfterEndSamples,
      overloads: this.overloads,
    };
  }
}
