/**
 * `useVoiceSession(options)`, written against the few React hooks it needs
 * (ReactHooks), so that it is bound to the app's React at the entry
 * (src/react/index.ts) and tested with a scripted hooks runtime.
 * The session is made once per mounted component: options are read at the
 * first render (give the component a new `key` to start over with others).
 */
import type { AudioLevels, VoiceSession } from "../index.js";
import { VoiceSessionStore, type UseVoiceSessionOptions, type VoiceSessionSnapshot } from "./voice-session-store.js";

/** The subset of React this hook uses (React 18 and 19 have all of it). */
export interface ReactHooks {
  useState<S>(initial: () => S): [S, unknown];
  useEffect(effect: () => void | (() => void), deps: readonly unknown[]): void;
  useSyncExternalStore<T>(subscribe: (fn: () => void) => () => void, getSnapshot: () => T, getServerSnapshot?: () => T): T;
}

export interface UseVoiceSessionResult extends VoiceSessionSnapshot {
  /** The session itself, for what the hook does not wrap (`on`, `handleTool`, `metrics`…). */
  session: VoiceSession;
  /** Resolves once listening; a failure lands in `error` instead of throwing. */
  start(): Promise<void>;
  stop(): Promise<void>;
  mute(): void;
  unmute(): void;
  /** Push-to-talk (`turn: { mode: "push-to-talk" }`): the button went down, or up. */
  startTurn(): void;
  endTurn(): void;
  interrupt(): Promise<void>;
  sendText(text: string): void;
  setInputDevice(deviceId: string | undefined): Promise<void>;
  setOutputDevice(deviceId: string): Promise<void>;
  /** Reads the levels now; call it in requestAnimationFrame (it does not re-render). */
  levels(options?: { bins?: boolean }): AudioLevels;
}

export type UseVoiceSession = (options: UseVoiceSessionOptions) => UseVoiceSessionResult;

export function createUseVoiceSession(react: ReactHooks): UseVoiceSession {
  return function useVoiceSession(options) {
    const [store] = react.useState(() => new VoiceSessionStore(options));
    const snapshot = react.useSyncExternalStore(store.subscribe, store.getSnapshot, store.getSnapshot);
    react.useEffect(() => store.mount(), [store]);
    return { ...snapshot, ...controlsOf(store), session: store.session };
  };
}

const controls = new WeakMap<VoiceSessionStore, Omit<UseVoiceSessionResult, keyof VoiceSessionSnapshot | "session">>();

/** The same functions on every render, so that they can be effect dependencies. */
function controlsOf(store: VoiceSessionStore) {
  let c = controls.get(store);
  if (!c) {
    c = {
      start: store.start,
      stop: store.stop,
      mute: () => store.live()?.mute(),
      unmute: () => store.live()?.unmute(),
      startTurn: () => store.live()?.startTurn(),
      endTurn: () => store.live()?.endTurn(),
      interrupt: () => store.live()?.interrupt() ?? Promise.resolve(),
      sendText: (text) => store.live()?.sendText(text),
      setInputDevice: (deviceId) => store.live()?.setInputDevice(deviceId) ?? Promise.resolve(),
      setOutputDevice: (deviceId) => store.live()?.setOutputDevice(deviceId) ?? Promise.resolve(),
      levels: store.levels,
    };
    controls.set(store, c);
  }
  return c;
}
