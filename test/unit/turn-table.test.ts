/**
 * docs/turn-machine.md against the machine, row by row: each row's situation
 * (a state reached by a short run of events), its event, the situation the
 * machine goes to and the kinds of its effects. A change to the machine that
 * the page does not show fails here: regenerate it (npm run docs:turns).
 */
import { readFileSync } from "node:fs";
import { describe, expect, test } from "vitest";
import { step } from "../../src/session/turn-machine.js";
import { describe as describeState, effectList, parseTurnTable, renderTurnTable, SAMPLE_EVENTS, SITUATIONS, situationState, TABLE_CONFIGS, turnTableRows } from "../lib/turn-table.js";

const page = readFileSync(new URL("../../docs/turn-machine.md", import.meta.url), "utf8");
const rows = parseTurnTable(page);

describe("docs/turn-machine.md is the machine's table", () => {
  test.each(rows.map((r) => [`${r.table} · ${r.situation} · ${r.event}`, r] as const))("%s", (_, row) => {
    const table = TABLE_CONFIGS.find((t) => t.id === row.table)!;
    const situation = SITUATIONS.find((s) => s.id === row.situation)!;
    const sample = SAMPLE_EVENTS.find((e) => e.label === row.event)!;
    expect(table && situation && sample).toBeTruthy();
    const state = situationState(situation, table.config);
    const next = step(state, sample.event(state), table.config);
    const described = describeState(next.state);
    expect(described === describeState(state) ? "=" : described).toBe(row.next);
    expect(effectList(next.effects)).toBe(row.effects);
  });

  test("the page has a row for every situation and every event, in each configuration (and nothing else)", () => {
    const key = (r: { table: string; situation: string; event: string }) => `${r.table} · ${r.situation} · ${r.event}`;
    const expected = TABLE_CONFIGS.flatMap((t) => turnTableRows(t)).map(key).sort();
    expect(rows.map(key).sort()).toEqual(expected);
  });

  test("the page is what the generator writes now (npm run docs:turns)", () => {
    expect(page).toBe(renderTurnTable());
  });

  test("each situation is what its title says, reached by its events", () => {
    const policies = TABLE_CONFIGS.find((t) => t.id === "policies")!.config;
    const kinds = Object.fromEntries(SITUATIONS.map((s) => [s.id, describeState(situationState(s, policies))]));
    expect(kinds).toMatchObject({
      idle: "idle",
      "stt-down": "listening, stt down",
      "turn-ending": "user_speaking, turn ending",
      "bot-owing": "bot_thinking, reply playing, stt owing",
      "barge-in": "bot_speaking, voice onset, reply audible, barge-in pending",
      held: "user_speaking, turn held",
      flushing: "user_speaking, voice real, turn flushing",
      speculative: "user_speaking, voice real, reply speculative",
      "backchannel-wait": "bot_speaking, reply audible, barge-in waiting for words",
    });
  });
});
