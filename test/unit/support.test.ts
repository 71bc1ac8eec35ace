import { describe, expect, it } from "vitest";
import { browserSupport } from "../../src/support";

class ModuleWorker {
  constructor(url: string, options: { type?: string }) {
    void options.type; // a browser reads the options, then fails to parse the URL
    throw new SyntaxError(`bad URL ${url}`);
  }
}
const fn = function () {};

/** A page with everything bargein needs. */
function fullPage(): Record<string, any> {
  return {
    AudioContext: fn,
    AudioWorkletNode: fn,
    isSecureContext: true,
    navigator: { mediaDevices: { getUserMedia: fn } },
    WebAssembly: { instantiate: fn },
    Worker: ModuleWorker,
    MessageChannel: fn,
    WebSocket: fn,
    fetch: fn,
    ReadableStream: fn,
    crossOriginIsolated: false,
    SharedArrayBuffer: fn,
  };
}

describe("browserSupport(): what bargein needs, the missing part named", () => {
  it("a page with everything is supported; shared memory only where the page is isolated", () => {
    expect(browserSupport(fullPage())).toEqual({ supported: true, missing: [], sharedMemory: false });
    expect(browserSupport({ ...fullPage(), crossOriginIsolated: true }).sharedMemory).toBe(true);
  });

  it("names each missing part and what it is for", () => {
    const page = fullPage();
    delete page.AudioWorkletNode;
    page.isSecureContext = false;
    const r = browserSupport(page);
    expect(r.supported).toBe(false);
    expect(r.missing.map((m) => m.feature)).toEqual(["AudioWorklet", "secure context"]);
    expect(r.missing[1]!.neededFor).toMatch(/https, or from localhost/);
  });

  it("a Worker that ignores { type: 'module' } counts as missing module workers", () => {
    class ClassicWorker {
      constructor(url: string) {
        throw new SyntaxError(`bad URL ${url}`);
      }
    }
    expect(browserSupport({ ...fullPage(), Worker: ClassicWorker }).missing.map((m) => m.feature)).toEqual(["module Worker"]);
  });
});
