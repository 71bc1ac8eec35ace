/**
 * Watches an AudioContext leave "running" and come back.
 *
 * A browser suspends a context on some device changes, and WebKit
 * interrupts one ("interrupted": a phone call, Siri, or on iOS a page put in
 * the background), after which only a user gesture may resume it
 * (https://developer.mozilla.org/en-US/docs/Web/API/BaseAudioContext/state).
 * A context the session created is resumed at once and, where that is not
 * allowed yet, at the page's next gesture (a pointer down, a key, a touch's
 * end), listened for in the capture phase so that an app stopping the event
 * does not keep the audio off. A context the app passed in is the app's to
 * resume. Every change is reported, the return to "running" included.
 *
 * Thread: main. Owner: the session's components (components.ts).
 */

/** What is watched: an AudioContext, or a stand-in with its state, its event and resume(). */
export interface WatchedContext extends EventTarget {
  readonly state: string;
  resume(): Promise<void>;
}

/** Where gestures are heard: the page's document. */
export type GestureTarget = Pick<EventTarget, "addEventListener" | "removeEventListener">;

const GESTURES = ["pointerdown", "keydown", "touchend"] as const;

/**
 * Calls `report(state)` at each change of `context`'s state after it left
 * "running" once; with `resumeIt`, resumes it as said above. Returns the
 * function that stops watching (and listening for gestures).
 */
export function watchContext(
  context: WatchedContext,
  resumeIt: boolean,
  report: (state: string) => void,
  gestures: GestureTarget | undefined = globalThis.document,
): () => void {
  let listening = false;
  let left = false;
  const resume = () => void context.resume().catch(() => {});
  const listen = (on: boolean) => {
    if (!gestures || listening === on) return;
    listening = on;
    for (const type of GESTURES) {
      if (on) gestures.addEventListener(type, resume, { capture: true, passive: true });
      else gestures.removeEventListener(type, resume, { capture: true });
    }
  };
  const onChange = () => {
    const state = context.state;
    if (state === "running") {
      listen(false);
      if (left) report(state);
      left = false;
      return;
    }
    left = true;
    report(state);
    if (state === "closed") return listen(false);
    if (!resumeIt) return;
    listen(true);
    resume();
  };
  context.addEventListener("statechange", onChange);
  return () => {
    context.removeEventListener("statechange", onChange);
    listen(false);
  };
}
