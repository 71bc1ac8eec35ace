/**
 * The typed emitter every component's events go through (src/util/emitter.ts):
 * on / once / off, and what a throwing listener does. VoiceSession, Player,
 * Microphone and Uplink delegate to it and VadWorker extends it; the session's
 * own once/off are checked at the end on scripted parts.
 */
import { afterEach, describe, expect, test, vi } from "vitest";
import { VoiceSession } from "../../src/session/voice-session.js";
import type { CapturePort, SessionComponents } from "../../src/session/ports.js";
import type { SessionState, SessionStateEvent } from "../../src/session/types.js";
import { fakeLlm, fakeStt, fakeTts } from "../../src/testing/fake-providers.js";
import { Emitter } from "../../src/util/emitter.js";
import { VirtualPlayer, VirtualVad } from "./session-fakes.js";
import { sleep } from "../lib/wait.mjs";

type Events = { ping: number; pong: string };

afterEach(() => {
  vi.unstubAllGlobals();
});

describe("Emitter", () => {
  test("once(name, fn) calls fn with the first payload only, then unsubscribes itself", () => {
    const emitter = new Emitter<Events>();
    const got: number[] = [];
    emitter.once("ping", (n) => got.push(n));
    expect(emitter.listenerCount).toBe(1);
    emitter.emit("ping", 1);
    emitter.emit("ping", 2);
    emitter.emit("ping", 3);
    expect(got).toEqual([1]);
    expect(emitter.listenerCount).toBe(0);
  });

  test("once(name, fn) is not called again by an emit of the same event from inside it", () => {
    const emitter = new Emitter<Events>();
    const got: number[] = [];
    emitter.once("ping", (n) => {
      got.push(n);
      emitter.emit("ping", n + 1);
    });
    emitter.emit("ping", 1);
    expect(got).toEqual([1]);
  });

  test("once(name, fn) returns the unsubscribe: called before the event, fn never runs", () => {
    const emitter = new Emitter<Events>();
    const got: number[] = [];
    const unsubscribe = emitter.once("ping", (n) => got.push(n));
    unsubscribe();
    emitter.emit("ping", 1);
    expect(got).toEqual([]);
    expect(emitter.listenerCount).toBe(0);
  });

  test("once(name) without a function still resolves with the next payload", async () => {
    const emitter = new Emitter<Events>();
    const next = emitter.once("pong");
    emitter.emit("pong", "a");
    emitter.emit("pong", "b");
    await expect(next).resolves.toBe("a");
    expect(emitter.listenerCount).toBe(0);
  });

  test("off(name, fn) removes fn from that event; the other listeners and events still fire", () => {
    const emitter = new Emitter<Events>();
    const log: string[] = [];
    const a = (n: number) => log.push(`a${n}`);
    const b = (n: number) => log.push(`b${n}`);
    const onPong = (s: string) => log.push(`pong ${s}`);
    emitter.on("ping", a);
    emitter.on("ping", b);
    emitter.on("pong", onPong);
    emitter.emit("ping", 1);
    emitter.off("ping", a);
    emitter.emit("ping", 2);
    emitter.emit("pong", "x");
    expect(log).toEqual(["a1", "b1", "b2", "pong x"]);
    expect(emitter.listenerCount).toBe(2);
  });

  test("off(name, fn) removes a once listener before it fires", () => {
    const emitter = new Emitter<Events>();
    const got: number[] = [];
    const fn = (n: number) => got.push(n);
    emitter.once("ping", fn);
    emitter.off("ping", fn);
    emitter.emit("ping", 1);
    expect(got).toEqual([]);
    expect(emitter.listenerCount).toBe(0);
  });

  test("off of a listener that is not subscribed does nothing: never added, added to another event, or already removed", () => {
    const emitter = new Emitter<Events>();
    const log: string[] = [];
    const kept = (n: number) => log.push(`kept${n}`);
    const removed = (n: number) => log.push(`removed${n}`);
    emitter.on("ping", kept);
    const unsubscribe = emitter.on("ping", removed);
    unsubscribe();

    emitter.off("ping", (n: number) => log.push(`stranger${n}`));
    emitter.off("pong", kept as never);
    emitter.off("ping", removed);
    emitter.off("ping", removed);
    unsubscribe();
    emitter.emit("ping", 1);

    expect(log).toEqual(["kept1"]);
    expect(emitter.listenerCount).toBe(1);
  });

  test("off of a function subscribed twice removes one subscription, the latest; the other still fires", () => {
    const emitter = new Emitter<Events>();
    const got: number[] = [];
    const fn = (n: number) => got.push(n);
    const first = emitter.on("ping", fn);
    emitter.on("ping", fn);
    emitter.emit("ping", 1);
    emitter.off("ping", fn);
    emitter.emit("ping", 2);
    expect(got).toEqual([1, 1, 2]);
    expect(emitter.listenerCount).toBe(1);
    // The one left is the first: its own unsubscribe takes it.
    first();
    emitter.emit("ping", 3);
    expect(got).toEqual([1, 1, 2]);
    expect(emitter.listenerCount).toBe(0);
  });

  test("a listener removed by an earlier listener during an emit does not run in it", () => {
    const emitter = new Emitter<Events>();
    const log: string[] = [];
    const second = (n: number) => log.push(`second${n}`);
    emitter.on("ping", (n) => {
      log.push(`first${n}`);
      emitter.off("ping", second);
    });
    emitter.on("ping", second);
    emitter.emit("ping", 1);
    emitter.emit("ping", 2);
    expect(log).toEqual(["first1", "first2"]);
  });

  test("a listener that throws does not stop the others; its error goes to reportError, once per throw", () => {
    const reported: unknown[] = [];
    vi.stubGlobal("reportError", (err: unknown) => reported.push(err));
    const emitter = new Emitter<Events>();
    const log: string[] = [];
    const boom = new Error("listener bug");
    emitter.on("ping", (n) => log.push(`before${n}`));
    emitter.on("ping", () => {
      throw boom;
    });
    emitter.once("ping", () => {
      throw boom;
    });
    emitter.on("ping", (n) => log.push(`after${n}`));
    emitter.emit("ping", 1);
    emitter.emit("ping", 2);
    expect(log).toEqual(["before1", "after1", "before2", "after2"]);
    // Two throws on the first emit (on + once), one on the second: the once that threw was still removed.
    expect(reported).toEqual([boom, boom, boom]);
    expect(emitter.listenerCount).toBe(3);
  });

  test("without reportError (Node 20), a listener's error is rethrown on a microtask, after the emit has reached every listener", () => {
    expect(typeof (globalThis as { reportError?: unknown }).reportError).toBe("undefined");
    const thrown: unknown[] = [];
    const queued: Array<() => void> = [];
    // Run the microtask by hand, so the rethrow is caught here instead of failing the run.
    vi.stubGlobal("queueMicrotask", (task: () => void) => queued.push(task));
    const emitter = new Emitter<Events>();
    const got: number[] = [];
    const boom = new Error("listener bug");
    emitter.on("ping", () => {
      throw boom;
    });
    emitter.on("ping", (n) => got.push(n));
    emitter.emit("ping", 7);
    expect(got).toEqual([7]);
    expect(queued).toHaveLength(1);
    try {
      queued[0]();
    } catch (err) {
      thrown.push(err);
    }
    expect(thrown).toEqual([boom]);
  });
});

describe("VoiceSession once / off", () => {
  function setup() {
    const stt = fakeStt();
    const llm = fakeLlm({ reply: () => "one two", msPerWord: 1 });
    const tts = fakeTts({ secondsPerWord: 0.25 });
    const player = new VirtualPlayer();
    const vad = new VirtualVad();
    const capture: CapturePort = { on: () => () => {}, setMeter: () => {} };
    const components: SessionComponents = { player, vad, capture, dispose: async () => {} };
    const session = new VoiceSession({ stt: stt.provider, llm: llm.provider, tts: tts.provider, components: async () => components });
    return { session, stt, vad, player };
  }

  test("once(\"state\", fn) hears only the first change; off(\"state\", fn) hears none; on still hears all", async () => {
    const t = setup();
    const first: SessionStateEvent[] = [];
    const removed: SessionState[] = [];
    const all: SessionState[] = [];
    t.session.once("state", (e) => first.push(e));
    const onRemoved = (e: SessionStateEvent) => removed.push(e.state);
    t.session.on("state", onRemoved);
    t.session.on("state", (e) => all.push(e.state));
    t.session.off("state", onRemoved);
    // Not subscribed: a no-op.
    t.session.off("state", () => {});

    await t.session.start();
    t.vad.emit("speechStart");
    t.stt.word("hello");
    await sleep(20);
    await t.session.stop();

    expect(all.slice(0, 3)).toEqual(["connecting", "listening", "user_speaking"]);
    expect(all.at(-1)).toBe("idle");
    expect(first).toEqual([{ state: "connecting", previous: "idle", degraded: false }]);
    expect(removed).toEqual([]);
  });

  test("once(\"state\") without a function resolves with the next change", async () => {
    const t = setup();
    const next = t.session.once("state");
    await t.session.start();
    await expect(next).resolves.toEqual({ state: "connecting", previous: "idle", degraded: false });
    await t.session.stop();
  });
});
