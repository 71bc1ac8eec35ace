// connectStream (src/audio/stream-source.ts) on stand-ins: a context whose createMediaStreamSource
// throws what Firefox threw for a context at another rate before its fix (a DOMException named NotSupportedError),
// or something else, or returns a node; a stream whose track reports its rate or does not.
import { describe, expect, test } from "vitest";
import { MicrophoneError } from "../../src/errors.js";
import { connectStream } from "../../src/audio/stream-source.js";

/** Firefox's text (Mozilla bug 1725336); connectStream matches the name, never this. */
const FIREFOX_TEXT = "Connecting AudioNodes from AudioContexts with different sample-rate is currently not supported.";

function context(sampleRate: number, create: () => unknown) {
  return { sampleRate, createMediaStreamSource: create } as unknown as Pick<AudioContext, "createMediaStreamSource" | "sampleRate">;
}

/** A stream of one audio track; `settings` is what its getSettings() gives, or no getSettings at all. */
function stream(settings?: MediaTrackSettings): MediaStream {
  const track = settings ? { getSettings: () => settings } : {};
  return { getAudioTracks: () => [track] } as unknown as MediaStream;
}

function caught(fn: () => unknown): unknown {
  try {
    fn();
  } catch (err) {
    return err;
  }
  throw new Error("did not throw");
}

describe("connectStream", () => {
  test("a NotSupportedError (Firefox, a context at another rate) becomes a MicrophoneError, reason unsupported, naming both rates and what to do, its cause kept", () => {
    const refused = new DOMException(FIREFOX_TEXT, "NotSupportedError");
    const err = caught(() =>
      connectStream(
        context(16000, () => {
          throw refused;
        }),
        stream({ sampleRate: 48000, deviceId: "default" }),
      ),
    );
    expect(err).toBeInstanceOf(MicrophoneError);
    const mic = err as MicrophoneError;
    expect(mic.name).toBe("MicrophoneError");
    expect(mic.reason).toBe("unsupported");
    expect(mic.service).toBe("microphone");
    expect(mic.cause).toBe(refused);
    expect(mic.message).toContain("48000 Hz");
    expect(mic.message).toContain("16000 Hz");
    expect(mic.message).toMatch(/without a `sampleRate`/);
    expect(mic.message).toMatch(/at the microphone's rate/);
  });

  test("a track that does not report its rate (no sampleRate setting as in Firefox, 0 as in WebKitGTK, or no getSettings) is named as at another rate", () => {
    for (const s of [stream({ deviceId: "default" }), stream({ sampleRate: 0 }), stream()]) {
      const err = caught(() =>
        connectStream(
          context(22050, () => {
            throw new DOMException("any text", "NotSupportedError");
          }),
          s,
        ),
      ) as MicrophoneError;
      expect(err.reason).toBe("unsupported");
      expect(err.message).toContain("The microphone (at another rate) cannot be connected");
      expect(err.message).toContain("22050 Hz");
      expect(err.message).not.toMatch(/undefined/);
    }
  });

  test("any other error passes through unchanged: another DOMException, a TypeError, the same text under another name", () => {
    for (const thrown of [new DOMException("the context is closed", "InvalidStateError"), new TypeError("not a MediaStream"), new Error(FIREFOX_TEXT)]) {
      const err = caught(() =>
        connectStream(
          context(16000, () => {
            throw thrown;
          }),
          stream({ sampleRate: 48000 }),
        ),
      );
      expect(err).toBe(thrown);
    }
  });

  test("connected: the context's node is returned", () => {
    const node = { connect() {} };
    const given: unknown[] = [];
    const s = stream({ sampleRate: 48000 });
    const got = connectStream(
      context(48000, (arg?: unknown) => {
        given.push(arg);
        return node;
      }),
      s,
    );
    expect(got).toBe(node);
    expect(given).toEqual([s]);
  });
});
