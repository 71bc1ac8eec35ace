// The AudioContext watcher (src/audio/context-watch.ts) on stand-ins: a context is an EventTarget
// with a state and resume(), the page's document one that hears gestures.
import { describe, expect, test } from "vitest";
import { watchContext } from "../../src/audio/context-watch.js";

class FakeContext extends EventTarget {
  state = "running";
  resumes = 0;
  /** What resume() does: run ("gesture" only while a gesture is being handled), or refuse. */
  allow: "always" | "gesture" | "never" = "never";
  inGesture = false;
  async resume(): Promise<void> {
    this.resumes++;
    if (this.allow === "always" || (this.allow === "gesture" && this.inGesture)) this.set("running");
    else throw new DOMException("not allowed to start", "NotAllowedError");
  }
  set(state: string): void {
    this.state = state;
    this.dispatchEvent(new Event("statechange"));
  }
}

class FakeDocument extends EventTarget {
  constructor(private readonly context: FakeContext) {
    super();
  }
  gesture(type = "pointerdown"): void {
    this.context.inGesture = true;
    this.dispatchEvent(new Event(type));
    this.context.inGesture = false;
  }
}

const settle = () => new Promise((r) => setTimeout(r, 0));

describe("watchContext", () => {
  test("a context the session made, interrupted: reported, resumed at once, and where that is refused at the page's next gesture; then reported running and no longer listened for", async () => {
    const context = new FakeContext();
    const page = new FakeDocument(context);
    const states: string[] = [];
    const stop = watchContext(context, true, (s) => states.push(s), page);
    context.allow = "gesture";
    context.set("interrupted");
    await settle();
    expect(states).toEqual(["interrupted"]);
    expect(context.resumes).toBe(1);
    expect(context.state).toBe("interrupted");
    page.gesture("keydown");
    await settle();
    expect(context.state).toBe("running");
    expect(states).toEqual(["interrupted", "running"]);
    const resumes = context.resumes;
    page.gesture();
    await settle();
    expect(context.resumes).toBe(resumes);
    stop();
  });

  test("a context the app passed in is reported but never resumed, and no gesture is listened for", async () => {
    const context = new FakeContext();
    const page = new FakeDocument(context);
    const states: string[] = [];
    watchContext(context, false, (s) => states.push(s), page);
    context.allow = "always";
    context.set("suspended");
    page.gesture("touchend");
    await settle();
    expect(states).toEqual(["suspended"]);
    expect(context.resumes).toBe(0);
    context.set("running");
    expect(states).toEqual(["suspended", "running"]);
  });

  test("running again with no departure is not reported; closed is, and is not resumed; stop() ends the listening", async () => {
    const context = new FakeContext();
    const page = new FakeDocument(context);
    const states: string[] = [];
    const stop = watchContext(context, true, (s) => states.push(s), page);
    context.set("running");
    expect(states).toEqual([]);
    context.set("suspended");
    await settle();
    stop();
    page.gesture();
    await settle();
    expect(context.resumes).toBe(1);
    context.set("closed");
    expect(states).toEqual(["suspended"]);
    const other = new FakeContext();
    const seen: string[] = [];
    watchContext(other, true, (s) => seen.push(s), new FakeDocument(other));
    other.set("closed");
    await settle();
    expect(seen).toEqual(["closed"]);
    expect(other.resumes).toBe(0);
  });
});
