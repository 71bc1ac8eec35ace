/** Drives the pure turn machine in tests: events in, the last state and every effect out, in order. */
import { INITIAL_TURN_STATE, step, type TurnConfig, type TurnEffect, type TurnEvent, type TurnState } from "../../src/session/turn-machine.js";

export const BASE_CONFIG: TurnConfig = { bargeInEnabled: true, confirmByWords: true, pauseThreshold: 0.8 };

/** Runs `events` from `state`; returns the last state and every effect, in order. */
export function runTurns(events: TurnEvent[], state: TurnState = INITIAL_TURN_STATE, config = BASE_CONFIG): { state: TurnState; effects: TurnEffect[] } {
  const effects: TurnEffect[] = [];
  for (const event of events) {
    const next = step(state, event, config);
    state = next.state;
    effects.push(...next.effects);
  }
  return { state, effects };
}

export const effectKinds = (effects: TurnEffect[]) => effects.map((e) => (e.kind === "setState" ? `state:${e.state}` : e.kind));

/** A session listening, then a user turn "hello there" whose reply (generation 1) is audible. */
export function botSpeakingState(config = BASE_CONFIG): TurnState {
  return runTurns(
    [
      { kind: "listen" },
      { kind: "speechStart", pausedByWorker: false, at: 0 },
      { kind: "word", text: "hello", at: 100 },
      { kind: "word", text: "there", at: 200 },
      { kind: "speechEnd", at: 900 },
      { kind: "turnFlushed", missed: false, at: 0 },
      { kind: "replyAudible", generation: 1 },
    ],
    INITIAL_TURN_STATE,
    config,
  ).state;
}
