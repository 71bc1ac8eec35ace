/**
 * A stand-in for the AudioWorkletGlobalScope (registerProcessor,
 * AudioWorkletProcessor with a port that records what it posts, currentFrame,
 * currentTime, sampleRate), so the real processor code runs in Node: only the
 * scope around it is faked, because Node has no audio rendering.
 */
export type Posted = { kind: string; [key: string]: any };

export const scope = globalThis as any;

/** Sets up the scope at `sampleRate`, loads `worklets/<file>` and returns the class it registered as `name`. */
export async function loadProcessor(name: string, file: string, sampleRate: number): Promise<any> {
  scope.sampleRate = sampleRate;
  scope.currentFrame = 0;
  scope.currentTime = 0;
  scope.AudioWorkletProcessor = class {
    readonly posted: Posted[] = [];
    readonly port = { onmessage: null as any, postMessage: (m: Posted) => this.posted.push(m), close() {} };
  };
  let registered: any;
  scope.registerProcessor = (registeredName: string, cls: unknown) => {
    if (registeredName === name) registered = cls;
  };
  // A computed specifier: tsc must not type-check the worklet outside its
  // AudioWorkletGlobalScope typings (worklets/tsconfig.json does that).
  const worklet = new URL(`../../worklets/${file}`, import.meta.url).href;
  await import(/* @vite-ignore */ worklet);
  if (!registered) throw new Error(`worklets/${file} registered no processor "${name}"`);
  return registered;
}
