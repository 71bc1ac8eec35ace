/**
 * The state behind `useVoiceSession`, with no React in it: one VoiceSession,
 * made lazily, its events folded into an immutable snapshot for React's
 * `useSyncExternalStore`, and a mount count that makes the component's
 * lifetime the session's.
 *
 * StrictMode: React 18 and 19 mount, unmount and mount again a component's
 * effects in development (https://react.dev/reference/react/StrictMode). A
 * release on the last unmount is deferred by one macrotask, and a mount in
 * the same commit cancels it, so the double mount keeps one session and one
 * microphone; a real unmount stops the session (and releases the mic) a
 * macrotask later. Nothing is opened during render: a VoiceSession opens
 * nothing before start(), so a render React throws away leaks nothing.
 *
 * Thread: main.
 */
import { VoiceSession } from "../index.js";
import type { DeviceList } from "../advanced.js";
import type { AudioLevels, HistoryMessage, LoadProgressEvent, SessionState, TranscriptEvent, VoiceSessionOptions } from "../index.js";

export interface UseVoiceSessionOptions extends VoiceSessionOptions {
  /** Start when the component mounts (the browser may want a user gesture first for audio). Default false. */
  autoStart?: boolean;
}

/** One transcript row, replaced in place by each `transcript` event of its id. */
export interface TranscriptRow {
  id: string;
  role: "user" | "assistant";
  text: string;
  final: boolean;
}

/** What a render reads; a new object on every change, the same one otherwise. */
export interface VoiceSessionSnapshot {
  state: SessionState;
  /** `session.degraded`: the session listens while the VAD's model still loads (`vad.waitForModel`). */
  degraded: boolean;
  /** The rows of this session's transcript, in order of their first event. */
  transcript: readonly TranscriptRow[];
  /** `session.history` (what the user heard of each reply), refreshed at each final message and at stop. */
  history: readonly HistoryMessage[];
  muted: boolean;
  /**
   * The last error, as an `Error` (a `BargeinError` when bargein raised it):
   * the `error` field of the session's `error` event (not the event: its
   * `fatal` is not kept; a fatal error also shows as `state` "idle"), or the
   * error a failed start() rejected with. Cleared by the next start().
   */
  error: Error | undefined;
  /** The audio devices at the last `devicechange`, or undefined before one. */
  devices: DeviceList | undefined;
  /**
   * The VAD's load during the last start(), summed over its model and wasm
   * (`progress` events), for a loading bar while `state` is "connecting" or
   * the session is `degraded`;
   * `cached` once both are in: true when both came from the HTTP cache.
   * Undefined before the first report of a start.
   */
  loading: LoadingSnapshot | undefined;
}

export interface LoadingSnapshot {
  loaded: number;
  total: number;
  cached: boolean | undefined;
}

export class VoiceSessionStore {
  readonly #options: UseVoiceSessionOptions;
  readonly #make: (options: VoiceSessionOptions) => VoiceSession;
  #session: VoiceSession | undefined;
  #offs: Array<() => void> = [];
  readonly #listeners = new Set<() => void>();
  #snapshot: VoiceSessionSnapshot = { state: "idle", degraded: false, transcript: [], history: [], muted: false, error: undefined, devices: undefined, loading: undefined };
  /** This start's last progress report per asset. */
  #assets = new Map<string, LoadProgressEvent>();
  #mounts = 0;
  #release: ReturnType<typeof setTimeout> | undefined;
  #stopping: Promise<void> | undefined;
  /** Set by the release of the last unmount, cleared by a mount: a start() that was waiting then opens nothing. */
  #released = false;

  constructor(options: UseVoiceSessionOptions, make: (options: VoiceSessionOptions) => VoiceSession = (o) => new VoiceSession(o)) {
    this.#options = options;
    this.#make = make;
  }

  /** The session, made on first use (for the app's own `on(...)` and methods). */
  get session(): VoiceSession {
    if (!this.#session) {
      const { autoStart: _, ...options } = this.#options;
      const session = (this.#session = this.#make(options));
      this.#offs = [
        session.on("state", (e) => this.#set({ state: e.state, degraded: e.degraded, ...(e.state === "idle" ? { history: heardHistory(session) } : {}) })),
        session.on("vad", (e) => e.kind === "ready" && this.#set({ degraded: false })),
        session.on("transcript", (e) => this.#onTranscript(e, session)),
        session.on("mute", (e) => this.#set({ muted: e.muted })),
        session.on("error", (e) => this.#set({ error: e.error })),
        session.on("devicechange", (e) => this.#set({ devices: { inputs: e.inputs, outputs: e.outputs } })),
        session.on("progress", (e) => this.#onProgress(e)),
      ];
      this.#set({ history: heardHistory(session), muted: session.muted });
    }
    return this.#session;
  }

  readonly subscribe = (fn: () => void): (() => void) => {
    this.#listeners.add(fn);
    return () => this.#listeners.delete(fn);
  };

  readonly getSnapshot = (): VoiceSessionSnapshot => this.#snapshot;

  /** The component mounted (its effect ran); returns the cleanup. */
  mount(): () => void {
    this.#mounts++;
    this.#released = false;
    clearTimeout(this.#release);
    this.#release = undefined;
    if (this.#options.autoStart) void this.start();
    let unmounted = false;
    return () => {
      if (unmounted) return;
      unmounted = true;
      if (--this.#mounts > 0) return;
      this.#release = setTimeout(() => void this.#dispose(), 0);
    };
  }

  /** Starts the session unless it runs; a start() that fails sets `error` (and resolves). */
  readonly start = async (): Promise<void> => {
    await this.#stopping;
    if (this.#released) return;
    const session = this.session;
    if (session.state !== "idle") return;
    this.#assets.clear();
    this.#set({ error: undefined, loading: undefined });
    try {
      await session.start();
    } catch (err) {
      this.#set({ error: err instanceof Error ? err : new Error(String(err)) });
    }
  };

  readonly stop = (): Promise<void> => {
    const session = this.#session;
    if (!session) return Promise.resolve();
    const stopping = (this.#stopping = session.stop().finally(() => {
      if (this.#stopping === stopping) this.#stopping = undefined;
    }));
    return stopping;
  };

  /** Levels now; silence once the component is gone (a late animation frame must not make a new session). */
  readonly levels = (options?: { bins?: boolean }): AudioLevels => this.live()?.getLevels(options) ?? { input: { rmsDb: -100 }, output: { rmsDb: -100 } };

  /** The session while the component is mounted; undefined once its last unmount released it. */
  readonly live = (): VoiceSession | undefined => (this.#released ? undefined : this.session);

  #onProgress(e: LoadProgressEvent): void {
    this.#assets.set(e.asset, e);
    const all = [...this.#assets.values()];
    const sum = (key: "loaded" | "total") => all.reduce((n, a) => n + a[key], 0);
    const settled = all.length === 2 && all.every((a) => a.cached !== undefined);
    this.#set({ loading: { loaded: sum("loaded"), total: sum("total"), cached: settled ? all.every((a) => a.cached) : undefined } });
  }

  /** The last unmount stuck: stop, unsubscribe, forget the session (a later mount makes a new one). */
  async #dispose(): Promise<void> {
    this.#release = undefined;
    if (this.#mounts > 0) return;
    this.#released = true;
    const session = this.#session;
    if (!session) return;
    await this.stop();
    if (this.#session !== session || this.#mounts > 0) return;
    for (const off of this.#offs.splice(0)) off();
    this.#session = undefined;
  }

  #onTranscript(e: TranscriptEvent, session: VoiceSession): void {
    const row: TranscriptRow = { id: e.id, role: e.role, text: e.text, final: e.final };
    const rows = this.#snapshot.transcript;
    const at = rows.findIndex((r) => r.id === e.id);
    const transcript = at < 0 ? [...rows, row] : rows.map((r, i) => (i === at ? row : r));
    this.#set({ transcript, ...(e.final || e.revised ? { history: heardHistory(session) } : {}) });
  }

  #set(change: Partial<VoiceSessionSnapshot>): void {
    this.#snapshot = { ...this.#snapshot, ...change };
    for (const fn of [...this.#listeners]) fn();
  }
}

/** The history as a snapshot: copies of the messages (the session's own change in place, behind a render's back). */
function heardHistory(session: VoiceSession): HistoryMessage[] {
  return session.history.map((m) => ({ ...m }));
}
