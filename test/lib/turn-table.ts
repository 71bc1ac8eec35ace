/**
 * The turn machine read per state: for each situation (a state reached by a
 * short run of events) and each event, what the machine does: the situation
 * it goes to and the kinds of the effects, in order. `renderTurnTable()` is
 * docs/turn-machine.md (written by scripts/turn-table.mjs);
 * test/unit/turn-table.test.ts checks the machine against that file, row by row.
 */
import { backchannelPolicyOf } from "../../src/session/backchannel.js";
import { turnEndPolicyOf } from "../../src/session/turn-end.js";
import { INITIAL_TURN_STATE, step, type TurnConfig, type TurnEffect, type TurnEvent, type TurnState } from "../../src/session/turn-machine.js";

export interface TableConfig {
  readonly id: string;
  readonly title: string;
  readonly config: TurnConfig;
}

const DEFAULT_CONFIG: TurnConfig = { bargeInEnabled: true, confirmByWords: true, pauseThreshold: 0.8 };

export const TABLE_CONFIGS: readonly TableConfig[] = [
  { id: "defaults", title: "The defaults (barge-in on, confirmed by words; no policy)", config: DEFAULT_CONFIG },
  {
    id: "policies",
    title: "Every turn policy on (backchannels, the echo guard, holdUnfinished, serviceEndOfTurn, preemptive, resumeUnheard, a turn detector)",
    config: {
      ...DEFAULT_CONFIG,
      vouchWordsMs: 1500,
      backchannel: backchannelPolicyOf(true),
      turnEnd: turnEndPolicyOf(true),
      serviceEndOfTurn: { quietMs: 100 },
      preemptive: { quietMs: 300 },
      resumeUnheard: true,
      turnDetector: { threshold: 0.5, holdMs: 900 },
    },
  },
];

export interface Situation {
  readonly id: string;
  readonly title: string;
  /** Only reachable with the policies on. */
  readonly policies?: true;
  readonly events: readonly TurnEvent[];
}

const said = (...words: string[]): TurnEvent[] => words.map((text, i) => ({ kind: "word", text, at: 300 + i * 100 }));
const speaking: TurnEvent[] = [{ kind: "listen" }, { kind: "speechStart", pausedByWorker: false, at: 0, contextTime: 1 }];
const talked: TurnEvent[] = [...speaking, { kind: "speechRealStart", at: 200 }, ...said("what", "time", "is", "it")];
const answered: TurnEvent[] = [...talked, { kind: "speechEnd", at: 1000, voiceEnd: 1.8 }, { kind: "turnFlushed", missed: false, at: 1100 }];
const botSpeaks: TurnEvent[] = [...answered, { kind: "replyAudible", generation: 1, contextTime: 2 }];
/** The same run, started while the VAD's model loads: its level fallback judges the voice. */
const onLevel = (events: readonly TurnEvent[]): TurnEvent[] => [{ kind: "listen", vad: "level" }, ...events.slice(1)];

export const SITUATIONS: readonly Situation[] = [
  { id: "idle", title: "Idle: not started, or stopped", events: [] },
  { id: "connecting", title: "Connecting: start() is opening the microphone, the VAD and the STT", events: [{ kind: "connect" }] },
  { id: "listening", title: "Listening: no one has the floor", events: [{ kind: "listen" }] },
  { id: "stt-down", title: "Listening with the STT down (shown as reconnecting)", events: [{ kind: "listen" }, { kind: "sttLost" }] },
  { id: "listening-level", title: "Listening degraded: the VAD's model loads, and its level fallback judges the voice", events: [{ kind: "listen", vad: "level" }] },
  { id: "user-speaking-level", title: "The user speaks while the level fallback judges (the model takes over inside the utterance)", events: onLevel(talked) },
  { id: "user-onset", title: "The user starts speaking (the VAD's onset, not confirmed yet, no words)", events: speaking },
  { id: "user-speaking", title: "The user speaks: real speech, with words", events: talked },
  { id: "turn-ending", title: "The user's turn is ending: the VAD's end, the STT flushed for the last words", events: [...talked, { kind: "speechEnd", at: 1000, voiceEnd: 1.8 }] },
  { id: "bot-thinking", title: "The bot thinks: its reply started, nothing audible yet", events: answered },
  { id: "bot-owing", title: "The bot thinks, and the STT still owes words to the user's turn (its flush missed)", events: [...talked, { kind: "speechEnd", at: 1000, voiceEnd: 1.8 }, { kind: "turnFlushed", missed: true, at: 1100 }] },
  { id: "bot-speaking", title: "The bot speaks: its reply is audible", events: botSpeaks },
  { id: "barge-in", title: "A barge-in is pending: speech over the bot paused it, not confirmed yet", events: [...botSpeaks, { kind: "speechStart", pausedByWorker: false, at: 3000, contextTime: 4 }] },
  {
    id: "barge-in-level",
    title: "A barge-in is pending while the level fallback judges: its real start, voiced length and end confirm nothing, a word does",
    events: onLevel([...botSpeaks, { kind: "speechStart", pausedByWorker: false, at: 3000, contextTime: 4 }]),
  },
  { id: "held", title: "The user's turn is held: flushed, its last word leaves it unfinished", policies: true, events: [...talked.slice(0, 3), ...said("take", "me", "to"), { kind: "speechEnd", at: 1000, voiceEnd: 1.8 }, { kind: "turnFlushed", missed: false, at: 1100 }] },
  { id: "flushing", title: "The preemptive flush: the utterance went quiet, the STT is flushed for a held reply", policies: true, events: [...talked, { kind: "speechQuiet", at: 1000, voiceEnd: 1.8 }] },
  { id: "speculative", title: "A preemptive reply is prepared, held, while the utterance may go on", policies: true, events: [...talked, { kind: "speechQuiet", at: 1000, voiceEnd: 1.8 }, { kind: "turnFlushed", missed: false, at: 1100 }] },
  {
    id: "backchannel-wait",
    title: "Speech over the bot ended before any word: the backchannel policy waits for its words",
    policies: true,
    events: [...botSpeaks, { kind: "speechStart", pausedByWorker: false, at: 3000, contextTime: 4 }, { kind: "speechRealStart", at: 3200 }, { kind: "speechEnd", at: 3400, voiceEnd: 4.3 }],
  },
];

/** One sample of each event (the STT's end of turn twice: final and eager), taken in any situation. */
export const SAMPLE_EVENTS: readonly { readonly label: string; readonly event: (s: TurnState) => TurnEvent }[] = [
  { label: "connect", event: () => ({ kind: "connect" }) },
  { label: "listen", event: () => ({ kind: "listen" }) },
  { label: "listen (level)", event: () => ({ kind: "listen", vad: "level" }) },
  { label: "vadReady", event: () => ({ kind: "vadReady" }) },
  { label: "speechStart", event: () => ({ kind: "speechStart", pausedByWorker: false, at: 5000, contextTime: 6 }) },
  { label: "speechRealStart", event: () => ({ kind: "speechRealStart", at: 5200 }) },
  { label: "speechEnd", event: () => ({ kind: "speechEnd", at: 5600, voiceEnd: 6.4 }) },
  { label: "misfire", event: () => ({ kind: "misfire", resumedByWorker: false, at: 5100 }) },
  { label: "speechQuiet", event: () => ({ kind: "speechQuiet", at: 5500, voiceEnd: 6.4 }) },
  { label: "speechResumed", event: () => ({ kind: "speechResumed", at: 5600 }) },
  { label: "speechVoiced", event: () => ({ kind: "speechVoiced", at: 5800 }) },
  { label: "turnPredicted", event: () => ({ kind: "turnPredicted", at: 5700, probability: 0.9 }) },
  { label: "word", event: () => ({ kind: "word", text: "please", at: 5300 }) },
  { label: "word (echo)", event: () => ({ kind: "word", text: "sunny", at: 5300, echo: true }) },
  { label: "wordRetracted", event: () => ({ kind: "wordRetracted" }) },
  { label: "sttPause", event: () => ({ kind: "sttPause", probability: 0.9 }) },
  { label: "sttEndOfTurn", event: () => ({ kind: "sttEndOfTurn", eager: false, at: 5700 }) },
  { label: "sttEndOfTurn (eager)", event: () => ({ kind: "sttEndOfTurn", eager: true, at: 5700, text: "what time is it" }) },
  { label: "sttTurnResumed", event: () => ({ kind: "sttTurnResumed" }) },
  { label: "sttMarker", event: () => ({ kind: "sttMarker" }) },
  { label: "sttConnected", event: () => ({ kind: "sttConnected" }) },
  { label: "sttLost", event: () => ({ kind: "sttLost" }) },
  { label: "turnFlushed", event: () => ({ kind: "turnFlushed", missed: false, at: 5700 }) },
  { label: "turnFlushed (missed)", event: () => ({ kind: "turnFlushed", missed: true, at: 5700 }) },
  { label: "replyAudible", event: (s) => ({ kind: "replyAudible", generation: replyGeneration(s), contextTime: 6 }) },
  { label: "replyDone", event: (s) => ({ kind: "replyDone", generation: replyGeneration(s) }) },
  { label: "interrupt", event: () => ({ kind: "interrupt", reason: "api" }) },
  { label: "timer", event: () => ({ kind: "timer", at: 10_000 }) },
  { label: "text", event: () => ({ kind: "text", text: "hello" }) },
  { label: "pushStart", event: () => ({ kind: "pushStart" }) },
  { label: "pushEnd", event: () => ({ kind: "pushEnd" }) },
  { label: "stop", event: () => ({ kind: "stop" }) },
  { label: "stopped", event: () => ({ kind: "stopped" }) },
];

/** The reply an event of the player names: the one playing, else the newest generation. */
function replyGeneration(s: TurnState): number {
  return s.reply.kind === "playing" ? s.reply.generation : s.generation;
}

/** A state in a few words: the floor, then whatever is under way (the voice, the turn, the reply, a barge-in, the STT link). */
export function describe(s: TurnState): string {
  const parts: string[] = [s.phase];
  if (s.vad.kind === "level") parts.push("vad level");
  if (s.voice.kind !== "quiet") parts.push(`voice ${s.voice.kind}`);
  if (s.turn.kind !== "open") parts.push(`turn ${s.turn.kind}`);
  if (s.reply.kind === "playing") parts.push(s.reply.audible ? "reply audible" : "reply playing");
  else if (s.reply.kind !== "none") parts.push(`reply ${s.reply.kind}`);
  if (s.bargeIn.kind === "pending") parts.push(s.bargeIn.backchannel?.endedAt !== undefined ? "barge-in waiting for words" : "barge-in pending");
  if (s.stt.kind !== "up") parts.push(`stt ${s.stt.kind}`);
  return parts.join(", ");
}

export function effectList(effects: readonly TurnEffect[]): string {
  return effects.map((e) => (e.kind === "setState" ? `state:${e.state}` : e.kind)).join(" → ");
}

export function situationState(situation: Situation, config: TurnConfig): TurnState {
  let state = INITIAL_TURN_STATE;
  for (const event of situation.events) state = step(state, event, config).state;
  return state;
}

export interface TableRow {
  readonly table: string;
  readonly situation: string;
  readonly event: string;
  readonly next: string;
  readonly effects: string;
}

/** Every (situation, event) pair of one configuration, as the machine does it now. */
export function turnTableRows(table: TableConfig): TableRow[] {
  const rows: TableRow[] = [];
  for (const situation of SITUATIONS) {
    if (situation.policies && table.id === "defaults") continue;
    const state = situationState(situation, table.config);
    for (const sample of SAMPLE_EVENTS) {
      const next = step(state, sample.event(state), table.config);
      const nextDescription = describe(next.state);
      rows.push({ table: table.id, situation: situation.id, event: sample.label, next: nextDescription === describe(state) ? "=" : nextDescription, effects: effectList(next.effects) });
    }
  }
  return rows;
}

const HEADER = `# The turn machine, state by state

Generated from the machine (\`src/session/turn-machine.ts\`) by \`npm run docs:turns\`; \`test/unit/turn-table.test.ts\`
checks every row below against the machine, so this page cannot drift from it. Edit the machine, then regenerate.

Each section is one situation: a state the machine reaches by a short run of events (\`test/lib/turn-table.ts\` lists them),
described as \`phase, what is under way\`: what judges the voice (\`vad level\`: the level fallback while the VAD's model
loads; else the model), the VAD's voice (\`onset\`, \`real\`), the user's turn (\`ending\`: its flush is out;
\`flushing\`: the preemptive flush; \`held\`: unfinished words wait for more), the reply (\`speculative\`: prepared, held;
\`playing\`, \`audible\`), a barge-in, and the STT link (\`owing\`: words still due to the last turn; \`down\`). Each row is one
event (a sample of it: times later than the situation's, the reply's own generation) and what the machine does: the situation
it goes to (\`=\`: the same one; data such as the words may change) and its effects, in order. The events that leave the
situation as it was and have no effect are listed under each table.
`;

/** docs/turn-machine.md. */
export function renderTurnTable(): string {
  const out: string[] = [HEADER];
  for (const table of TABLE_CONFIGS) {
    out.push(`\n## ${table.title}\n`);
    const rows = turnTableRows(table);
    for (const situation of SITUATIONS) {
      const mine = rows.filter((r) => r.situation === situation.id);
      if (mine.length === 0) continue;
      out.push(`\n### ${situation.title}\n`);
      out.push(`\`${table.id}/${situation.id}\` · \`${describe(situationState(situation, table.config))}\`\n`);
      const acting = mine.filter((r) => r.next !== "=" || r.effects !== "");
      out.push("| event | next | effects |", "| --- | --- | --- |");
      for (const r of acting) out.push(`| ${r.event} | ${r.next} | ${r.effects || "—"} |`);
      const ignored = mine.filter((r) => !acting.includes(r)).map((r) => r.event);
      out.push("", `Same situation, no effects: ${ignored.length ? ignored.join(", ") : "none"}.`, "");
    }
  }
  return `${out.join("\n").replace(/\n{3,}/g, "\n\n").trimEnd()}\n`;
}

/** The rows docs/turn-machine.md states, read back: the same shape as `turnTableRows`. */
export function parseTurnTable(markdown: string): TableRow[] {
  const rows: TableRow[] = [];
  let table = "";
  let situation = "";
  for (const line of markdown.split("\n")) {
    const heading = /^`([a-z]+)\/([a-z-]+)` · /.exec(line);
    if (heading) {
      [table, situation] = [heading[1], heading[2]];
      continue;
    }
    const row = /^\| (.+?) \| (.+?) \| (.+?) \|$/.exec(line);
    if (row && situation && row[1] !== "event" && row[1] !== "---") {
      rows.push({ table, situation, event: row[1], next: row[2], effects: row[3] === "—" ? "" : row[3] });
      continue;
    }
    const ignored = /^Same situation, no effects: (.*)\.$/.exec(line);
    if (ignored && situation && ignored[1] !== "none") {
      for (const event of ignored[1].split(", ")) rows.push({ table, situation, event, next: "=", effects: "" });
    }
  }
  return rows;
}
