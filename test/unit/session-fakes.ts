/**
 * Scripted audio parts for the SDK's own VoiceSession tests in Node: the
 * public fakes of bargein/testing (FakePlayer runs the playback worklet's
 * pause-token rules; FakeVad is a VadPort the test emits on), with the
 * bookkeeping these tests look at: a log of the calls the session made,
 * the samples written per generation, and a rendered position that the test
 * sets directly instead of moving a clock. The real worklets and worker are
 * proven in the browser suites.
 */
import { FakePlayer, FakeVad } from "../../src/testing/index.js";

export class VirtualPlayer extends FakePlayer {
  readonly log: string[] = [];
  /** Samples written per generation (stale writes excluded). */
  readonly written = new Map<number, number>();
  /** Seconds of the current generation rendered: set by the test; this player's clock never moves. */
  rendered = 0;
  constructor() {
    super({ outputLatency: 0.1 });
  }
  /** The player's events, for a test to emit one itself ("contextState", "ended"). */
  get events() {
    return this.emitter;
  }
  override write(pcm: Float32Array | Int16Array, o: { sampleRate: number; generation: number }) {
    if (o.generation >= this.generation) this.written.set(o.generation, (this.written.get(o.generation) ?? 0) + pcm.length);
    super.write(pcm, o);
  }
  override setGeneration(g: number) {
    this.log.push(`generation=${g}`);
    this.rendered = 0;
    super.setGeneration(g);
  }
  override endGeneration(g: number) {
    this.log.push(`end(${g})`);
    super.endGeneration(g);
  }
  override flush() {
    this.log.push("flush");
    super.flush();
  }
  override pause(token: number) {
    this.log.push(`pause(${token})`);
    super.pause(token);
  }
  override resume(token: number) {
    this.log.push(`resume(${token})`);
    super.resume(token);
  }
  override renderedSeconds() {
    return this.rendered;
  }
  /** Pretends the whole generation played out, at once. */
  playOut(g: number) {
    this.events.emit("ended", { generation: g });
  }
}

export class VirtualVad extends FakeVad {
  /** The VAD's events, for a test to emit one itself ("error"). */
  get events() {
    return this.emitter;
  }
  /**
   * Emits `name` with the fields the test leaves out at their defaults. A speech start has no onset time
   * unless the test gives one: this world's player clock never moves, so an onset at 0 would come before
   * every reply's first sample (0.1 s, its output latency) and read as speech before the reply was heard.
   */
  override emit(name: any, e: object = {}) {
    super.emit(name, { contextTime: name === "speechStart" ? undefined : 0, pausedPlayback: false, resumedPlayback: false, ...e } as any);
  }
}
