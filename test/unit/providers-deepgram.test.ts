/**
 * deepgramStt against the reference backend's Deepgram emulator (demo/server/emulators/deepgram.mjs):
 * real speech through /v1/listen and /v2/listen, the token grant, the fault knobs, the server's
 * counters as the witness. Close codes the emulator cannot be made to send quickly (NET-0001 comes
 * after 10 s of silence) and Flux's Error message come from a scripted `ws` server instead, said
 * where used. The parser is fuzzed with 10,000 random and mutated messages from the docs' fixtures.
 */
import { readFileSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { startReferenceBackend, type ReferenceBackend } from "../../demo/server/backend.mjs";
import { readWav } from "../../demo/server/wav.mjs";
import { AtCapacityError, BargeinError, ConfigError, ConnectionClosedError, ProtocolError, ServiceTimeoutError } from "../../src/errors.js";
import { deepgramStt } from "../../src/providers/deepgram-stt.js";
import { parseFluxMessage, parseNovaMessage } from "../../src/providers/deepgram-wire.js";
import type { SttEvent, SttStream } from "../../src/providers/types.js";
import { decodeJson } from "../../src/providers/wire.js";
import { rejectionOf, startWsServer, type TestWsServer } from "./providers-servers.js";
import { sleep } from "../lib/wait.mjs";

const KEY = "dg-test-key-7";
const fixtures = new URL("../fixtures/", import.meta.url);
const docs = (name: string) => JSON.parse(readFileSync(new URL(`deepgram/${name}.json`, fixtures), "utf8"));
function speech(name: string) {
  const wav = readWav(readFileSync(new URL(`speech/${name}.wav`, fixtures)));
  return { samples: wav.samples, meta: JSON.parse(readFileSync(new URL(`speech/${name}.json`, fixtures), "utf8")) };
}

let backend: ReferenceBackend;
beforeAll(async () => {
  backend = await startReferenceBackend({ serveStatic: false, token: KEY });
}, 60_000);
afterAll(() => backend?.close());

/** What a page's token function does: ask its own server, which calls POST /v1/auth/grant with the key. */
const grantedToken = async () => {
  const res = await fetch(`${backend.url}/v1/auth/grant`, { method: "POST", headers: { Authorization: `Token ${KEY}` } });
  return ((await res.json()) as { access_token: string }).access_token;
};

/** Sends 16 kHz audio in 20 ms chunks, as the uplink does, then `silenceS` of silence. */
function speak(stream: SttStream, samples: Int16Array, silenceS: number) {
  const all = new Int16Array(samples.length + Math.round(silenceS * 16000));
  all.set(samples);
  let bytes = 0;
  for (let i = 0; i < all.length; i += 320) bytes += stream.sendAudio(all.subarray(i, i + 320));
  return bytes;
}

/** Reads events until `done` holds for one (or the stream ends). */
async function readUntil(stream: SttStream, done: (e: SttEvent) => boolean, timeoutMs = 20_000): Promise<SttEvent[]> {
  const events: SttEvent[] = [];
  const abort = AbortSignal.timeout(timeoutMs);
  for await (const e of stream.events(abort)) {
    events.push(e);
    if (done(e)) break;
  }
  return events;
}

const wordsOf = (events: SttEvent[]) => events.flatMap((e) => (e.kind === "word" ? [e] : []));

async function openCount(): Promise<number> {
  return (backend.stats() as unknown as Record<string, { open?: number }>).deepgram?.open ?? 0;
}
async function eventuallyClosed(): Promise<number> {
  for (let i = 0; i < 200 && (await openCount()) > 0; i++) await sleep(10);
  return openCount();
}

describe("deepgramStt /v1/listen (Nova)", () => {
  test("a full stream: final words with their times, word-end after each, speech-start first, and flush's marker after the last word", async () => {
    const { samples, meta } = speech("help-me");
    const stt = deepgramStt({ urls: backend.wsUrl, token: grantedToken });
    expect(stt.audioFormat).toEqual({ sampleRate: 16000, encoding: "s16" });
    const stream = await stt.connect();
    expect(stream.bytesPerSample).toBe(2);
    const bytes = speak(stream, samples, 0.3);
    expect(bytes).toBe((samples.length + 4800) * 2);
    const flushed = stream.flush();
    const events = await readUntil(stream, (e) => e.kind === "marker");
    await flushed;
    const words = wordsOf(events);
    expect(words.map((w) => w.text).join(" ")).toBe("can you help me");
    words.forEach((w, i) => expect(Math.abs(w.startS - meta.words[i].start)).toBeLessThan(0.25));
    // Each word is followed by its end, after its start.
    events.forEach((e, i) => {
      if (e.kind !== "word") return;
      const end = events[i + 1];
      expect(end.kind).toBe("word-end");
      expect(end.kind === "word-end" && end.stopS).toBeGreaterThan(e.startS);
    });
    expect(events[0].kind).toBe("speech-start");
    expect(events.at(-1)).toEqual({ kind: "marker", id: 1 });
    await stream.close();
    expect(await eventuallyClosed()).toBe(0);
  });

  test("flush mid-word: Finalize makes the open utterance final, so its words come before the marker", async () => {
    const { samples, meta } = speech("weather-question");
    const stream = await deepgramStt({ urls: backend.wsUrl, token: grantedToken }).connect();
    speak(stream, samples.subarray(0, meta.offsetSamples), 0); // the audio stops right after "today"
    await stream.flush();
    const events = await readUntil(stream, (e) => e.kind === "marker");
    expect(wordsOf(events).map((w) => w.text).join(" ")).toBe("what is the weather like today");
    await stream.close();
  });

  test("close() sends CloseStream and closes the socket; the server sees the stream end", async () => {
    const stream = await deepgramStt({ urls: backend.wsUrl, token: grantedToken }).connect();
    expect(await openCount()).toBe(1);
    await stream.close();
    await stream.close(); // idempotent
    expect(await eventuallyClosed()).toBe(0);
    expect(() => stream.sendAudio(new Int16Array(320))).toThrow(ConnectionClosedError);
  });

  test("an abort while connecting rejects with the abort and leaves no stream open", async () => {
    const abort = new AbortController();
    const pending = deepgramStt({ urls: `${backend.wsUrl}?delay_ms=400`, token: grantedToken }).connect(abort.signal);
    setTimeout(() => abort.abort(), 50);
    const err = await rejectionOf(pending);
    expect((err as Error).name).toBe("AbortError");
    await sleep(500);
    expect(await eventuallyClosed()).toBe(0);
  });
});

describe("deepgramStt /v2/listen (Flux)", () => {
  test("a turn: speech-start, an eager end, then the turn's words and end-of-turn with Flux's confidence", async () => {
    const { samples, meta } = speech("weather-question");
    const stream = await deepgramStt({ urls: backend.wsUrl, token: grantedToken, model: "flux-general-en", eagerEotThreshold: 0.4 }).connect();
    speak(stream, samples, 1.5);
    const events = await readUntil(stream, (e) => e.kind === "end-of-turn" && !e.eager);
    expect(events[0].kind).toBe("speech-start");
    const eager = events.findIndex((e) => e.kind === "end-of-turn" && e.eager);
    const firstWord = events.findIndex((e) => e.kind === "word");
    expect(eager).toBeGreaterThan(0);
    expect(eager).toBeLessThan(firstWord); // no word before the turn is final
    const words = wordsOf(events);
    expect(words.map((w) => w.text).join(" ")).toBe("what is the weather like today");
    words.forEach((w, i) => expect(Math.abs(w.startS - meta.words[i].start)).toBeLessThan(0.25));
    const end = events.at(-1)!;
    expect(end.kind === "end-of-turn" && end.confidence).toBeGreaterThanOrEqual(0.7);
    await stream.close();
  });

  test("flush is ForceEndTurn: the words so far, then the marker once the window reaches the flushed audio", async () => {
    const { samples, meta } = speech("turn-on-lights");
    const stream = await deepgramStt({ urls: backend.wsUrl, token: grantedToken, model: "flux-general-en" }).connect();
    speak(stream, samples.subarray(0, meta.offsetSamples + 1600), 0);
    await stream.flush();
    const events = await readUntil(stream, (e) => e.kind === "marker");
    expect(wordsOf(events).map((w) => w.text).join(" ")).toBe("please turn on the lights");
    const kinds = events.map((e) => e.kind);
    expect(kinds.indexOf("end-of-turn")).toBeLessThan(kinds.indexOf("marker"));
    await stream.close();
  });
});

describe("deepgramStt errors", () => {
  test("a wrong token is refused at the handshake: a ConnectionClosedError that names the likely causes", async () => {
    const err = await rejectionOf(deepgramStt({ urls: backend.wsUrl, token: async () => "not-a-jwt", maxTries: 1 }).connect());
    expect(err).toBeInstanceOf(ConnectionClosedError);
    // Discovery's error lists the URLs tried; its cause is the provider's, which names the causes.
    expect(((err as Error).cause as Error).message).toMatch(/401/);
    expect(JSON.stringify([(err as Error).message, ((err as Error).cause as Error).message])).not.toContain("not-a-jwt");
    // The API key itself works in the token subprotocol (for servers and tests, never pages).
    const stream = await deepgramStt({ urls: backend.wsUrl, token: async () => KEY, tokenKind: "token" }).connect();
    await stream.close();
  });

  test("an empty token, or one a subprotocol cannot carry, is a ConfigError that says what to return, before any socket opens", async () => {
    for (const token of ["", "has space"]) {
      const err = await rejectionOf(deepgramStt({ urls: backend.wsUrl, token: async () => token, maxTries: 1 }).connect());
      expect(err).toBeInstanceOf(ConfigError);
      expect((err as Error).message).toMatch(/token function returned .*\/v1\/auth\/grant/);
    }
  });

  test("capacity: the 429 handshake refusal is a ConnectionClosedError naming the concurrency limit", async () => {
    const err = await rejectionOf(deepgramStt({ urls: `${backend.wsUrl}?capacity=0`, token: grantedToken, maxTries: 1 }).connect());
    expect(err).toBeInstanceOf(ConnectionClosedError);
    expect(((err as Error).cause as Error).message).toMatch(/429/);
  });

  test("a handshake slower than startupTimeoutMs is a ServiceTimeoutError", async () => {
    const err = await rejectionOf(deepgramStt({ urls: `${backend.wsUrl}?delay_ms=800`, token: grantedToken, startupTimeoutMs: 200, maxTries: 1 }).connect());
    expect(err).toBeInstanceOf(ServiceTimeoutError);
  });

  test("a frame that is not JSON ends the events with a ProtocolError", async () => {
    const stream = await deepgramStt({ urls: `${backend.wsUrl}?malformed=1`, token: grantedToken }).connect();
    const err = await rejectionOf(readUntil(stream, () => false));
    expect(err).toBeInstanceOf(ProtocolError);
  });

  test("a message over maxMessageBytes ends the events with a ProtocolError naming the limit", async () => {
    const stream = await deepgramStt({ urls: `${backend.wsUrl}?oversize=5000`, token: grantedToken, maxMessageBytes: 2000 }).connect();
    const err = await rejectionOf(readUntil(stream, () => false));
    expect(err).toBeInstanceOf(ProtocolError);
    expect((err as Error).message).toMatch(/maxMessageBytes/);
  });

  describe("close codes and Flux errors (a scripted ws server: the emulator sends NET-0001 only after 10 s of silence)", () => {
    let server: TestWsServer | undefined;
    afterAll(() => server?.close());
    test.each([
      [1011, "NET-0001", ServiceTimeoutError],
      [1008, "DATA-0000", ProtocolError],
      [1013, "try again later", AtCapacityError],
    ] as const)("a close with %i (%s) maps to %o", async (code, reason, kind) => {
      server = await startWsServer((conn) => void setTimeout(() => conn.socket.close(code, reason), 20));
      const stream = await deepgramStt({ urls: server.url, maxTries: 1 }).connect();
      const err = await rejectionOf(readUntil(stream, () => false));
      expect(err).toBeInstanceOf(kind);
      await server.close();
      server = undefined;
    });

    test("a Flux Error message about limits is an AtCapacityError; another is a BargeinError quoting it", async () => {
      for (const [description, kind] of [["Too many concurrent requests", AtCapacityError], ["Unsupported model", BargeinError]] as const) {
        server = await startWsServer((conn) => {
          conn.sendJson({ type: "Connected", request_id: "r", sequence_id: 0 });
          conn.sendJson({ type: "Error", code: "X", description });
        });
        const stream = await deepgramStt({ urls: server.url, model: "flux-general-en", maxTries: 1 }).connect();
        const err = await rejectionOf(readUntil(stream, () => false));
        expect(err).toBeInstanceOf(kind);
        expect((err as Error).message).toContain(description);
        await server.close();
        server = undefined;
      }
    });
  });
});

describe("deepgramStt's parser", () => {
  const ctx = { service: "stt", url: "wss://fuzz" };
  const examples = [...docs("v1-server").messages, ...docs("v2-server").messages] as Record<string, unknown>[];

  test("the docs' example messages parse to the values they hold", () => {
    const [started, interim, final] = docs("v1-server").messages;
    expect(parseNovaMessage(decodeJson(JSON.stringify(started), ctx), ctx)).toEqual({ type: "SpeechStarted", timestampS: 9.54 });
    expect(parseNovaMessage(decodeJson(JSON.stringify(interim), ctx), ctx)).toMatchObject({ type: "Results", isFinal: false });
    const parsed = parseNovaMessage(decodeJson(JSON.stringify(final), ctx), ctx);
    expect(parsed).toMatchObject({ type: "Results", isFinal: true, speechFinal: true, startS: 0, durationS: 2.01 });
    expect(parsed.type === "Results" && parsed.words.map((w) => w.text)).toEqual(["Can", "you", "help", "me?"]);
    const end = docs("v2-server").messages.at(-1);
    const turn = parseFluxMessage(decodeJson(JSON.stringify(end), ctx), ctx);
    expect(turn).toMatchObject({ type: "TurnInfo", event: "EndOfTurn", endOfTurnConfidence: 0.88, windowEndS: 3.36 });
  });

  test("10,000 random and mutated messages: no uncaught error, every rejection a ProtocolError", () => {
    let seed = 20261202;
    const r = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
    const int = (n: number) => Math.floor(r() * n);
    const scalars = [null, true, false, 0, -1, 1e308, Number.NaN, "", "x", [], {}, [1, "a"], { word: 1 }];
    const mutateValue = (v: unknown, depth = 0): unknown => {
      if (r() < 0.15) return scalars[int(scalars.length)];
      if (Array.isArray(v)) return r() < 0.2 ? [] : v.map((x) => mutateValue(x, depth + 1));
      if (v && typeof v === "object") {
        const out: Record<string, unknown> = {};
        for (const [k, x] of Object.entries(v)) if (r() > 0.1) out[k] = mutateValue(x, depth + 1);
        return out;
      }
      return v;
    };
    const mutateText = (text: string) => {
      const chars = [...text];
      for (let n = 1 + int(3); n > 0; n--) {
        const at = int(chars.length + 1);
        if (r() < 0.5) chars.splice(at, 1);
        else chars.splice(at, 0, ["{", "}", '"', ",", ":", "[", "\\"][int(7)]);
      }
      return chars.join("");
    };
    let rejected = 0;
    let accepted = 0;
    for (let i = 0; i < 10_000; i++) {
      const example = examples[int(examples.length)];
      const k = int(10);
      const frame: string | ArrayBuffer =
        k < 6 ? JSON.stringify(mutateValue(example)) : k < 9 ? mutateText(JSON.stringify(example)) : new Uint8Array([0x7b, int(256)]).buffer;
      const parse = i % 2 === 0 ? parseNovaMessage : parseFluxMessage;
      try {
        parse(decodeJson(frame, ctx), ctx);
        accepted++;
      } catch (err) {
        expect(err).toBeInstanceOf(ProtocolError);
        rejected++;
      }
    }
    expect(accepted + rejected).toBe(10_000);
    expect(rejected).toBeGreaterThan(1000);
    expect(accepted).toBeGreaterThan(1000);
  });
});
