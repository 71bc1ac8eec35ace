// Loaded before any SDK code: counts the page's WebSockets (by wrapping the
// constructor, so every socket the SDK opens is seen) and records unhandled
// promise rejections and uncaught errors. Classic script, so it runs first.
(() => {
  const Native = window.WebSocket;
  const live = new Set();
  let opened = 0;
  class CountedWebSocket extends Native {
    constructor(...args) {
      super(...args);
      opened++;
      live.add(this);
      this.addEventListener("close", () => live.delete(this));
    }
  }
  window.WebSocket = CountedWebSocket;
  window.pageWatch = {
    /** Sockets not yet closed (CONNECTING, OPEN or CLOSING). */
    openSockets: () => live.size,
    openedSockets: () => opened,
    /** URLs of the sockets still open, secrets and all: for this test page's eyes only. */
    openSocketUrls: () => [...live].map((ws) => new URL(ws.url).pathname),
    unhandled: [],
  };
  window.addEventListener("unhandledrejection", (e) => {
    window.pageWatch.unhandled.push(`unhandledrejection: ${e.reason?.name ?? ""}: ${e.reason?.message ?? e.reason}`);
  });
  window.addEventListener("error", (e) => {
    window.pageWatch.unhandled.push(`error: ${e.message}`);
  });
})();
