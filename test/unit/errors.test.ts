import { build } from "esbuild";
import { describe, expect, test } from "vitest";
import * as source from "../../src/errors.js";

/** Every error class, its literal `name` and its `code`: the README's table. */
const EXPECTED: Record<string, string> = {
  BargeinError: "error",
  AssetLoadError: "asset_load",
  ConfigError: "config",
  ProtocolError: "protocol",
  AtCapacityError: "at_capacity",
  ServiceTimeoutError: "service_timeout",
  DeadlineExceededError: "deadline_exceeded",
  ConnectionClosedError: "connection_closed",
  OverloadError: "overload",
  MicrophoneError: "microphone",
  AudioContextError: "audio_context",
  UnsupportedError: "unsupported",
  StateError: "state",
};

/** Enough options for every constructor (ServiceTimeoutError needs timeoutMs, MicrophoneError a reason). */
const OPTIONS = { service: "stt", url: "ws://h/x", timeoutMs: 500, reason: "denied", closeCode: 1006 };

type ErrorClass = new (message: string, options: typeof OPTIONS) => source.BargeinError;

/** The exported classes of a module that are BargeinError or derive from it. */
function errorClasses(mod: Record<string, unknown>, base: unknown): Map<string, ErrorClass> {
  const out = new Map<string, ErrorClass>();
  for (const [key, value] of Object.entries(mod)) {
    if (typeof value === "function" && (value === base || value.prototype instanceof (base as ErrorClass))) out.set(key, value as ErrorClass);
  }
  return out;
}

/** src/errors.ts bundled and minified as an app's production build would be. */
async function minifiedErrors(): Promise<Record<string, unknown>> {
  const result = await build({
    entryPoints: ["src/errors.ts"],
    bundle: true,
    minify: true,
    format: "iife",
    globalName: "bargeinErrors",
    target: "es2022",
    write: false,
    logLevel: "silent",
  });
  return new Function(`${result.outputFiles[0].text}; return bargeinErrors;`)() as Record<string, unknown>;
}

describe("the error family", () => {
  test("every class in src/errors.ts has a row in the table, and the codes are unique", () => {
    expect([...errorClasses(source, source.BargeinError).keys()].sort()).toEqual(Object.keys(EXPECTED).sort());
    expect(new Set(Object.values(EXPECTED)).size).toBe(Object.keys(EXPECTED).length);
  });

  test("in a minified bundle, where the classes are renamed, every error keeps its literal name and its code", async () => {
    const mod = await minifiedErrors();
    const classes = errorClasses(mod, mod.BargeinError);
    expect([...classes.keys()].sort()).toEqual(Object.keys(EXPECTED).sort());
    const renamed = [...classes].filter(([exported, cls]) => cls.name !== exported).length;
    // The premise: the minifier did rename the classes, so `new.target.name` would read a short identifier.
    expect(renamed).toBe(classes.size);
    for (const [exported, cls] of classes) {
      const err = new cls("what failed, where, and what to do", OPTIONS);
      expect({ name: err.name, code: err.code }).toEqual({ name: exported, code: EXPECTED[exported] });
      expect(err).toBeInstanceOf(mod.BargeinError as ErrorClass);
      expect(err).toBeInstanceOf(Error);
      expect(String(err)).toBe(`${exported}: what failed, where, and what to do`);
    }
  });

  test("the fields each class adds survive too: closeCode, timeoutMs, reason, service, url, cause", async () => {
    const mod = await minifiedErrors();
    const Closed = mod.ConnectionClosedError as ErrorClass;
    const closed = new Closed("socket closed", OPTIONS) as source.ConnectionClosedError;
    expect({ code: closed.code, closeCode: closed.closeCode, service: closed.service, url: closed.url }).toEqual({
      code: "connection_closed",
      closeCode: 1006,
      service: "stt",
      url: "ws://h/x",
    });
    const Timeout = mod.ServiceTimeoutError as ErrorClass;
    expect((new Timeout("slow", OPTIONS) as source.ServiceTimeoutError).timeoutMs).toBe(500);
    const Mic = mod.MicrophoneError as ErrorClass;
    const mic = new Mic("denied", { ...OPTIONS, service: undefined as unknown as string }) as source.MicrophoneError;
    expect({ reason: mic.reason, service: mic.service }).toEqual({ reason: "denied", service: "microphone" });
    const Base = mod.BargeinError as new (m: string, o: { cause: unknown }) => Error;
    const cause = new TypeError("underlying");
    expect(new Base("wrapped", { cause }).cause).toBe(cause);
  });
});
