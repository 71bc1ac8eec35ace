// A socket cancelled while it connects is let open, then closed: closed while connecting, the browser
// reports it on the page's console as an error (Firefox: "can't establish a connection"), which the
// engine runner's no-console-error check caught on a stop() during a reply's start.
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { MessageSocket } from "../../src/providers/message-socket";

class FakeSocket extends EventTarget {
  static CONNECTING = 0;
  static OPEN = 1;
  static CLOSING = 2;
  static CLOSED = 3;
  static last: FakeSocket;
  readyState = FakeSocket.CONNECTING;
  binaryType = "blob";
  closes: number[] = [];
  constructor(readonly url: string) {
    super();
    FakeSocket.last = this;
  }
  close(code = 1000) {
    this.closes.push(code);
    this.readyState = FakeSocket.CLOSED;
    this.dispatchEvent(Object.assign(new Event("close"), { code, reason: "", wasClean: true }));
  }
  opens() {
    this.readyState = FakeSocket.OPEN;
    this.dispatchEvent(new Event("open"));
  }
}

const options = { service: "tts", url: "ws://h/x", safeUrl: "ws://h/x", decode: () => undefined };

beforeEach(() => {
  vi.useFakeTimers();
  (globalThis as any).WebSocket = FakeSocket;
});
afterEach(() => {
  vi.useRealTimers();
  delete (globalThis as any).WebSocket;
});

describe("a MessageSocket cancelled before it opened", () => {
  it("is closed once it opens, not while it connects", async () => {
    const abort = new AbortController();
    const opened = MessageSocket.open(options, abort.signal);
    abort.abort();
    await expect(opened).rejects.toBeDefined();
    const ws = FakeSocket.last;
    expect(ws.closes).toEqual([]);
    ws.opens();
    expect(ws.closes).toEqual([1000]);
  });

  it("is closed after the close wait if it never opens", async () => {
    const abort = new AbortController();
    const opened = MessageSocket.open(options, abort.signal);
    abort.abort();
    await expect(opened).rejects.toBeDefined();
    await vi.advanceTimersByTimeAsync(999);
    expect(FakeSocket.last.closes).toEqual([]);
    await vi.advanceTimersByTimeAsync(1);
    expect(FakeSocket.last.closes).toEqual([1000]);
  });

  it("that failed (not cancelled) is closed at once", async () => {
    const opened = MessageSocket.open(options);
    FakeSocket.last.dispatchEvent(new Event("error"));
    await expect(opened).rejects.toThrow(/could not connect/);
    expect(FakeSocket.last.closes).toEqual([1000]);
  });
});
