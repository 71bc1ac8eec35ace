/**
 * The page going away from the user: hidden (tab switched, phone locked) or
 * unloaded. A session stops then (`releaseMicOnHide`), so the microphone is not
 * left open in the background. Thread: main; a no-op outside a document.
 */

/** Calls `onHidden` when the page is hidden or unloaded; returns the function that stops watching. */
export function watchPageHidden(onHidden: () => void): () => void {
  if (typeof document === "undefined") return () => {};
  const onChange = (event: Event) => {
    if (event.type === "visibilitychange" && document.visibilityState !== "hidden") return;
    onHidden();
  };
  document.addEventListener("visibilitychange", onChange);
  globalThis.addEventListener("pagehide", onChange);
  return () => {
    document.removeEventListener("visibilitychange", onChange);
    globalThis.removeEventListener("pagehide", onChange);
  };
}

const RELEASED_ON_HIDE = "the page was hidden, so the session stopped and released the microphone (releaseMicOnHide); call start() again to resume";

/** The session's `releaseMicOnHide`: once the page is hidden, warn and stop, unless the session stopped already (`signal`). */
export function stopWhenHidden(signal: AbortSignal, warn: (e: { service: string; message: string }) => void, stop: () => unknown): () => void {
  return watchPageHidden(() => {
    if (signal.aborted) return;
    warn({ service: "session", message: RELEASED_ON_HIDE });
    void stop();
  });
}
