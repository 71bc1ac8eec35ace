// A socket cancelled while it connects is let open, then closed: closed while connecting, the browser
// reports it on the page's console as an error (Firefox: "can't establish a connection"), which the
// engine runner's no-console-error check caught on a stop() during a reply's start. And stop() resolves
// only once that close is done: soak.spec found a socket left to open after stop() open after stop().
// Every step is on the fake clock; the tests assert the order of what happened (the log).
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { MessageSocket } from "../../src/providers/message-socket";
import { kyutaiStt } from "../../src/providers/kyutai-stt";
import { VoiceSession } from "../../src/session/voice-session";
import type { CapturePort, SessionComponents } from "../../src/session/ports";
import { fakeLlm, fakeTts } from "../../src/testing/fake-providers";
import { Emitter } from "../../src/util/emitter";
import { VirtualPlayer, VirtualVad } from "./session-fakes";

/** What happened, in order: the sockets' opens and closes, and the promises the test watches. */
let log: string[] = [];

class FakeSocket extends EventTarget {
  static CONNECTING = 0;
  static OPEN = 1;
  static CLOSING = 2;
  static CLOSED = 3;
  static all: FakeSocket[] = [];
  readyState = FakeSocket.CONNECTING;
  binaryType = "blob";
  bufferedAmount = 0;
  constructor(readonly url: string) {
    super();
    FakeSocket.all.push(this);
  }
  /** Closes at once, in a clean handshake (a closed-while-connecting socket says so in its state at the call). */
  close(code = 1000) {
    log.push(`ws: close ${code}${this.readyState === FakeSocket.CONNECTING ? " while connecting" : ""}`);
    this.readyState = FakeSocket.CLOSED;
    this.dispatchEvent(Object.assign(new Event("close"), { code, reason: "", wasClean: true }));
  }
  send() {}
  opens() {
    log.push("ws: open");
    this.readyState = FakeSocket.OPEN;
    this.dispatchEvent(new Event("open"));
  }
  refuses() {
    log.push("ws: refused");
    this.readyState = FakeSocket.CLOSED;
    this.dispatchEvent(new Event("error"));
    this.dispatchEvent(Object.assign(new Event("close"), { code: 1006, reason: "", wasClean: false }));
  }
}

const options = { service: "tts", url: "ws://h/x", safeUrl: "ws://h/x", decode: () => undefined };

/** Lets every pending promise step run (the fake clock stands still). */
async function settle(): Promise<void> {
  for (let i = 0; i < 50; i++) await Promise.resolve();
}

/** Logs how `promise` settled: "`name` resolved" or "`name` rejected". */
function watch(name: string, promise: Promise<unknown>): void {
  promise.then(
    () => log.push(`${name} resolved`),
    () => log.push(`${name} rejected`),
  );
}

let realWebSocket: unknown;
beforeEach(() => {
  vi.useFakeTimers();
  log = [];
  FakeSocket.all = [];
  realWebSocket = (globalThis as any).WebSocket;
  (globalThis as any).WebSocket = FakeSocket;
});
afterEach(async () => {
  // No socket of one test may be left for the next one's settleCancelled().
  await vi.runAllTimersAsync();
  vi.useRealTimers();
  (globalThis as any).WebSocket = realWebSocket;
});

/** Opens a socket and cancels the open while it connects; resolves once the open has rejected. */
async function cancelledWhileConnecting(): Promise<FakeSocket> {
  const abort = new AbortController();
  const opened = MessageSocket.open(options, abort.signal);
  watch("open()", opened);
  abort.abort();
  await settle();
  return FakeSocket.all.at(-1)!;
}

describe("a MessageSocket cancelled while it connects", () => {
  it("rejects at once, and is closed once it opens, not before", async () => {
    const ws = await cancelledWhileConnecting();
    expect(log).toEqual(["open() rejected"]);
    await vi.advanceTimersByTimeAsync(500);
    expect(log).toEqual(["open() rejected"]);
    ws.opens();
    await settle();
    expect(log).toEqual(["open() rejected", "ws: open", "ws: close 1000"]);
  });

  it("is closed (while connecting, then) after the close wait if it never opens", async () => {
    const ws = await cancelledWhileConnecting();
    await vi.advanceTimersByTimeAsync(999);
    expect(log).toEqual(["open() rejected"]);
    await vi.advanceTimersByTimeAsync(1);
    expect(log).toEqual(["open() rejected", "ws: close 1000 while connecting"]);
    expect(ws.readyState).toBe(FakeSocket.CLOSED);
  });

  it("that the server refuses meanwhile is not closed again", async () => {
    const ws = await cancelledWhileConnecting();
    ws.refuses();
    await settle();
    expect(log).toEqual(["open() rejected", "ws: refused"]);
    await vi.advanceTimersByTimeAsync(1000);
    expect(log).toEqual(["open() rejected", "ws: refused"]);
  });
});

describe("a MessageSocket whose open failed or timed out (not cancelled)", () => {
  it("is closed at once after a failed handshake", async () => {
    const opened = MessageSocket.open(options);
    watch("open()", opened);
    FakeSocket.all[0].dispatchEvent(new Event("error"));
    await settle();
    expect(log).toEqual(["ws: close 1000 while connecting", "open() rejected"]);
    await expect(opened).rejects.toThrow(/could not connect/);
  });

  it("is closed at once when its time limit ran out (a slow service is not waited for)", async () => {
    const limit = new AbortController();
    const opened = MessageSocket.open(options, limit.signal);
    watch("open()", opened);
    limit.abort(new DOMException("timed out after 5000 ms", "TimeoutError"));
    await settle();
    expect(log).toEqual(["ws: close 1000 while connecting", "open() rejected"]);
  });
});

describe("MessageSocket.settleCancelled()", () => {
  it("resolves only after the cancelled socket opened and was closed", async () => {
    const ws = await cancelledWhileConnecting();
    watch("settleCancelled()", MessageSocket.settleCancelled());
    await vi.advanceTimersByTimeAsync(300);
    expect(log).toEqual(["open() rejected"]);
    ws.opens();
    await settle();
    expect(log).toEqual(["open() rejected", "ws: open", "ws: close 1000", "settleCancelled() resolved"]);
  });

  it("resolves within the close wait when the socket never opens", async () => {
    await cancelledWhileConnecting();
    watch("settleCancelled()", MessageSocket.settleCancelled());
    await vi.advanceTimersByTimeAsync(999);
    expect(log).toEqual(["open() rejected"]);
    await vi.advanceTimersByTimeAsync(1);
    expect(log).toEqual(["open() rejected", "ws: close 1000 while connecting", "settleCancelled() resolved"]);
  });

  it("resolves at once when no cancelled socket is closing", async () => {
    const ws = await cancelledWhileConnecting();
    ws.opens();
    await settle();
    watch("settleCancelled()", MessageSocket.settleCancelled());
    await settle();
    expect(log).toEqual(["open() rejected", "ws: open", "ws: close 1000", "settleCancelled() resolved"]);
  });
});

describe("VoiceSession.stop() while the STT's socket connects", () => {
  /** A session on a real STT provider (kyutaiStt, so a real MessageSocket) and scripted audio parts; start() left connecting. */
  async function startConnecting() {
    const captureEvents = new Emitter<any>();
    const capture: CapturePort = { on: (name: any, fn: any) => captureEvents.on(name, fn), setMeter: () => {} };
    const components: SessionComponents = { player: new VirtualPlayer(), vad: new VirtualVad(), capture, dispose: async () => {} };
    const session = new VoiceSession({
      stt: kyutaiStt({ urls: "ws://stt.test" }),
      llm: fakeLlm({ reply: () => "ok" }).provider,
      tts: fakeTts().provider,
      components: async () => components,
      releaseMicOnHide: false,
    });
    watch("start()", session.start());
    await settle();
    expect(FakeSocket.all).toHaveLength(1);
    return { session, ws: FakeSocket.all[0] };
  }

  it("resolves only after the socket, let open, is closed", async () => {
    const { session, ws } = await startConnecting();
    watch("stop()", session.stop());
    await vi.advanceTimersByTimeAsync(200);
    // start() gives up at once; stop() waits for the socket.
    expect(log).toEqual([]);
    ws.opens();
    await settle();
    expect(log).toEqual(["ws: open", "ws: close 1000", "stop() resolved", "start() rejected"]);
    expect(session.state).toBe("idle");
  });

  it("resolves within the close wait when the socket never opens", async () => {
    const { session } = await startConnecting();
    watch("stop()", session.stop());
    await vi.advanceTimersByTimeAsync(999);
    expect(log).toEqual([]);
    await vi.advanceTimersByTimeAsync(1);
    expect(log).toEqual(["ws: close 1000 while connecting", "stop() resolved", "start() rejected"]);
  });
});
