/**
 * The session's counters over its whole life: turns, interruptions, the last
 * turn's timings and the capture gaps. The uplink's and the LLM queue's
 * figures are their owners' (SttLink, LlmAdmission); `snapshot` puts them
 * together. Pure: no clock, no DOM.
 */
import type { UplinkMetrics } from "../uplink/uplink.js";
import type { SessionMetrics, TurnMetrics } from "./types.js";

export class SessionCounters {
  turns = 0;
  interruptions = 0;
  lastTurn: TurnMetrics | undefined;
  /** Spans the browser skipped the capture for (see CapturePort "gap"). */
  readonly captureGaps = { count: 0, ms: 0 };
  /** STT words taken for the bot's own echo. */
  echoWords = 0;
  /** turn.preemptive: replies prepared held, released, dropped. */
  readonly preemptive = { started: 0, released: 0, dropped: 0 };
  #echo: { erleDb: number; delayMs: number; converged: boolean } | undefined;

  echoStats(stats: { erleDb: number; delayMs: number; converged: boolean }): void {
    this.#echo = { erleDb: stats.erleDb, delayMs: stats.delayMs, converged: stats.converged };
  }

  /** A new reply: its number, counted from 1. */
  nextTurn(): number {
    return ++this.turns;
  }

  captureGap(ms: number): void {
    this.captureGaps.count++;
    this.captureGaps.ms += ms;
  }

  /** An `interruption` (barge-in, interrupt(), a stall); not a stop() or a failed TTS. */
  interruption(): void {
    this.interruptions++;
  }

  /** A finished or interrupted turn; returns the report (a copy). */
  report(turn: TurnMetrics): TurnMetrics {
    this.lastTurn = { ...turn };
    return this.lastTurn;
  }

  snapshot(parts: { uplink: UplinkMetrics | undefined; sttReplayedSamples: number; llm: SessionMetrics["llm"]; mic: SessionMetrics["mic"]; devices: SessionMetrics["devices"] }): SessionMetrics {
    return {
      turns: this.turns,
      interruptions: this.interruptions,
      lastTurn: this.lastTurn,
      uplink: parts.uplink,
      sttReplayedSamples: parts.sttReplayedSamples,
      captureGaps: { ...this.captureGaps },
      llm: parts.llm,
      mic: parts.mic,
      devices: parts.devices,
      preemptive: { ...this.preemptive },
      echo: this.#echo || this.echoWords ? { erleDb: NaN, delayMs: NaN, converged: false, ...this.#echo, echoWords: this.echoWords } : undefined,
    };
  }
}
