// The client side of the contract sequences (test/contract/sequences/*.mjs): one WebSocket that
// records every frame in arrival order, so a sequence can assert messages and their order, never
// times. Shared by the vitest contract suites (against the reference backend's emulators) and by
// scripts/check-live.mjs (against the real services), so both replay the same sequences.
// `ws` rather than the WebSocket global: it takes headers (the live services' API keys) and gives
// the raw close code.
import WebSocket from "ws";

/** Longest wait for one expected message: a safety bound that turns a hang into a named failure. */
export const WAIT_MS = 15_000;

export class ContractSocket {
  /** @param {string} url @param {{ protocols?: string[], headers?: Record<string, string> }} [auth] */
  constructor(url, auth = {}) {
    /** @type {{ json: Record<string, any> | null, binary: boolean, bytes: number }[]} */
    this.frames = [];
    /** @type {{ code: number, reason: string } | null} */
    this.closeInfo = null;
    /** @type {(() => void)[]} */
    this.waiters = [];
    this.ws = new WebSocket(url, auth.protocols, { headers: auth.headers });
    this.opened = new Promise((resolve, reject) => {
      this.ws.once("open", () => resolve(undefined));
      this.ws.once("unexpected-response", (_req, res) => reject(new Error(`the handshake was refused: HTTP ${res.statusCode}`)));
      this.ws.once("error", reject);
    });
    this.opened.catch(() => {});
    this.ws.on("message", (data, isBinary) => {
      let json = null;
      if (!isBinary) {
        try {
          json = JSON.parse(data.toString());
        } catch {
          json = null;
        }
      }
      this.frames.push({ json, binary: isBinary, bytes: /** @type {Buffer} */ (data).length });
      this.#notify();
    });
    this.ws.on("close", (code, reason) => {
      this.closeInfo = { code, reason: reason.toString() };
      this.#notify();
    });
    this.ws.on("error", () => {});
  }

  #notify() {
    for (const w of this.waiters.splice(0)) w();
  }

  /** The JSON messages so far. */
  get messages() {
    return this.frames.map((f) => f.json).filter((m) => m !== null);
  }

  /** @param {unknown} message */
  send(message) {
    this.ws.send(typeof message === "string" || Buffer.isBuffer(message) ? message : JSON.stringify(message));
  }

  /**
   * Waits until `predicate` holds over the messages so far; a hang past WAIT_MS rejects naming `what`.
   * @param {(messages: Record<string, any>[]) => boolean} predicate @param {string} what
   */
  async until(predicate, what, limitMs = WAIT_MS) {
    const deadline = Date.now() + limitMs;
    while (!predicate(this.messages)) {
      if (this.closeInfo && !predicate(this.messages)) throw new Error(`the socket closed (${this.closeInfo.code} ${this.closeInfo.reason}) before ${what}; got ${this.summary()}`);
      if (Date.now() > deadline) throw new Error(`no ${what} within ${limitMs} ms; got ${this.summary()}`);
      await new Promise((resolve) => {
        this.waiters.push(() => resolve(undefined));
        setTimeout(resolve, Math.max(1, deadline - Date.now()));
      });
    }
  }

  /** Resolves with the close code and reason once the socket is closed (bounded like `until`). */
  async closed(limitMs = WAIT_MS) {
    const deadline = Date.now() + limitMs;
    while (!this.closeInfo) {
      if (Date.now() > deadline) throw new Error(`the socket did not close within ${limitMs} ms; got ${this.summary()}`);
      await new Promise((resolve) => {
        this.waiters.push(() => resolve(undefined));
        setTimeout(resolve, Math.max(1, deadline - Date.now()));
      });
    }
    return this.closeInfo;
  }

  close() {
    if (this.ws.readyState === WebSocket.OPEN || this.ws.readyState === WebSocket.CONNECTING) this.ws.close(1000);
  }

  summary() {
    const types = this.frames.map((f) => (f.binary ? `binary(${f.bytes})` : (f.json?.type ?? f.json?.event ?? Object.keys(f.json ?? {}).join("+"))));
    return JSON.stringify(types.length > 16 ? [...types.slice(0, 8), "…", ...types.slice(-8)] : types);
  }
}

/**
 * One documented rule, checked: what was expected, whether the service did it, and what it did.
 * @typedef {{ rule: string, ok: boolean, got: string }} Check
 */

/** @param {string} rule @param {boolean} ok @param {unknown} got @returns {Check} */
export const check = (rule, ok, got) => ({ rule, ok, got: typeof got === "string" ? got : JSON.stringify(got) });

/** The messages' `type`s (or another key), in order. @param {Record<string, any>[]} messages */
export const typesOf = (messages, key = "type") => messages.map((m) => m[key]).filter((t) => t !== undefined);

/** Whether `wanted` occurs in `seen` in this order (other items may come between). @param {unknown[]} seen @param {unknown[]} wanted */
export function inOrder(seen, wanted) {
  let at = 0;
  for (const s of seen) if (s === wanted[at]) at++;
  return at === wanted.length;
}
