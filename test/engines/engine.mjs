// What the runner needs of an engine, whatever drives it: launch with PulseAudio's environment,
// open a page and run code in it, the console errors it saw, and a close that never hangs (a page
// frozen in the engine included).
import { launchFirefox } from "./firefox.mjs";
import { launchWebkit } from "./webkit.mjs";

/**
 * @typedef {object} EnginePageHandle
 * @property {(fn: Function, arg?: unknown) => Promise<any>} evaluate  runs `fn(arg)` in the page; awaits its promise
 * @property {() => Promise<void>} close
 *
 * @typedef {object} Engine
 * @property {string} name
 * @property {string} version
 * @property {number | undefined} pid
 * @property {(url: string) => Promise<EnginePageHandle>} open
 * @property {string[]} consoleErrors  every console error and uncaught error seen so far, in order
 * @property {string[]} stdoutLines
 * @property {() => Promise<void>} close
 * @property {() => string} [diagnose]  what the engine's threads wait in, for a page that stopped answering
 */

/** The engines this runner knows, by name. */
export const ENGINES = {
  firefox: launchFirefox,
  webkit: launchWebkit,
};

/**
 * @param {string} name
 * @param {{ env: Record<string, string> }} options
 * @returns {Promise<Engine>}
 */
export function launchEngine(name, options) {
  const launch = ENGINES[/** @type {keyof typeof ENGINES} */ (name)];
  if (!launch) throw new Error(`unknown engine "${name}": one of ${Object.keys(ENGINES).join(", ")}`);
  return launch(options);
}
