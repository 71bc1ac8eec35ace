import { Quest } from "../advanced.js";
import { delay } from "../util/timeout.js";

/** What a scripted quest did, in order, for assertions. */
export interface ScriptedQuestLog {
  events: string[];
}

/**
 * A quest whose init takes `initMs`, whose run lasts `runMs` (or until
 * aborted), and which records "init", "run", "close" and "aborted" in `log`.
 * Useful to test code that drives a QuestManager without opening sockets.
 */
export function scriptedQuest(
  name: string,
  log: ScriptedQuestLog,
  options: { initMs?: number; runMs?: number; initError?: Error; runError?: Error } = {},
): Quest<string> {
  return new Quest<string>(
    name,
    async (signal) => {
      log.events.push(`${name}:init`);
      await delay(options.initMs ?? 0, signal);
      if (options.initError) throw options.initError;
      return `${name}:resource`;
    },
    async (_resource, signal) => {
      log.events.push(`${name}:run`);
      try {
        await delay(options.runMs ?? 1e9, signal);
      } catch (err) {
        log.events.push(`${name}:aborted`);
        throw err;
      }
      if (options.runError) throw options.runError;
    },
    () => {
      log.events.push(`${name}:close`);
    },
  );
}
