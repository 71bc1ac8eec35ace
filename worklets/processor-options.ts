/**
 * The options a bargein processor cannot run without, checked once in its
 * constructor. A node built without them (`new AudioWorkletNode(context,
 * "bargein-playback")`) failed deep inside the constructor with an engine's
 * own words ("opts is undefined", "Cannot read properties of undefined"); this
 * names the processor, what is missing and who builds the node. The error
 * fires the node's `processorerror` event and reaches the page's console.
 */

/**
 * Returns `options.processorOptions` if it is an object holding each of
 * `numbers` as a finite number; else throws an Error naming `processor`, the
 * missing field and `builtBy`. Allocates only the error.
 */
export function requireProcessorOptions<T extends object>(
  processor: string,
  options: { processorOptions?: unknown } | undefined,
  numbers: readonly (keyof T & string)[],
  builtBy: string,
): T {
  const opts = options?.processorOptions;
  const fix = `build the node with ${builtBy}, which passes them, not with new AudioWorkletNode(context, "${processor}") alone`;
  if (typeof opts !== "object" || opts === null) throw new Error(`${processor}: processorOptions are missing; ${fix}`);
  const typed = opts as T;
  for (const name of numbers) {
    const value = (typed as Record<string, unknown>)[name];
    if (typeof value !== "number" || !Number.isFinite(value)) {
      throw new Error(`${processor}: processorOptions.${name} must be a number (got ${value === undefined ? "nothing" : String(value)}); ${fix}`);
    }
  }
  return typed;
}
