// Pocketsphinx (Debian's libpocketsphinx3, 0.8+5prealpha API) through the koffi FFI.
//
// API facts of the installed version (checked with `nm -D`): configuration is
// sphinxbase's variadic `cmd_ln_init(NULL, ps_args(), strict, key, value, ..., NULL)`
// (there is no ps_config_* in 5prealpha); `ps_get_hyp(ps, &score)` has no uttid.
// `ps_seg_iter` lost its score argument in some builds; passing an extra pointer is
// harmless under the x86-64/aarch64 C calling conventions, so we declare it with one.
//
// Threading: `ps_process_raw` and `ps_init` run on koffi's worker threads
// (`.async`), so the event loop keeps serving sockets while a chunk is decoded or
// a model loads. A decoder is used by one stream at a time (the pool hands it out
// exclusively). sphinxbase's log target is one global FILE: logging is switched
// off once, at load (`err_set_logfp(NULL)`), and decoders are configured with no
// `-logfn`, because `ps_init` with one fcloses that global FILE and opens another
// while other threads may be writing to it. That race corrupted the heap and
// crashed or hung the process now and then (test/backend/decoder-threads.test.ts).
import { existsSync } from "node:fs";

export const MODEL_DIR = "/usr/share/pocketsphinx/model/en-us";
const LIBS = ["libpocketsphinx.so.3", "libsphinxbase.so.3"];
/** Debian packages that provide the recogniser; `pocketsphinx` adds the CLI tools. */
export const SPEECH_PACKAGES = ["libpocketsphinx3", "pocketsphinx-en-us"];

/** Frames per second of pocketsphinx's front end (10 ms hop). */
export const FRAME_RATE = 100;

/** @type {any} */
let api = null;
/** @type {string | null} */
let loadError = null;

/** Loads the libraries once. Returns null when they are missing, with the reason in `recogniserUnavailableReason()`. */
async function loadApi() {
  if (api || loadError) return api;
  if (!existsSync(`${MODEL_DIR}/en-us.lm.bin`)) {
    loadError = `pocketsphinx model not found in ${MODEL_DIR}`;
    return null;
  }
  try {
    const koffi = (await import("koffi")).default;
    const sb = koffi.load(LIBS[1]);
    const ps = koffi.load(LIBS[0]);
    api = {
      cmd_ln_init: sb.func("void *cmd_ln_init(void *inout, void *defn, int strict, ...)"),
      err_set_logfp: sb.func("void err_set_logfp(void *fp)"),
      err_get_logfp: sb.func("void *err_get_logfp()"),
      ps_args: ps.func("void *ps_args()"),
      ps_init: ps.func("void *ps_init(void *config)"),
      ps_free: ps.func("int ps_free(void *ps)"),
      ps_start_utt: ps.func("int ps_start_utt(void *ps)"),
      ps_process_raw: ps.func(
        "int ps_process_raw(void *ps, const int16_t *data, size_t n, int no_search, int full_utt)",
      ),
      ps_get_hyp: ps.func("const char *ps_get_hyp(void *ps, _Out_ int *score)"),
      ps_end_utt: ps.func("int ps_end_utt(void *ps)"),
      ps_seg_iter: ps.func("void *ps_seg_iter(void *ps, _Out_ int *score)"),
      ps_seg_next: ps.func("void *ps_seg_next(void *seg)"),
      ps_seg_free: ps.func("void ps_seg_free(void *seg)"),
      ps_seg_word: ps.func("const char *ps_seg_word(void *seg)"),
      ps_seg_frames: ps.func("void ps_seg_frames(void *seg, _Out_ int *sf, _Out_ int *ef)"),
    };
    api.err_set_logfp(null);
  } catch (err) {
    api = null;
    loadError = `cannot load ${LIBS.join(", ")}: ${/** @type {Error} */ (err).message}`;
  }
  return api;
}

/**
 * sphinxbase's global log target (a FILE *), null while logging is off. For the
 * test that decoders never change it.
 * @returns {Promise<unknown>}
 */
export async function sphinxLogTarget() {
  return (await loadApi()) ? api.err_get_logfp() : null;
}

/** Forgets a failed load, so that libraries installed since then are picked up. */
export function forgetRecogniserCheck() {
  if (!api) loadError = null;
}

/** @returns {Promise<boolean>} */
export async function recogniserAvailable() {
  return (await loadApi()) !== null;
}

/** Why the recogniser is not available, or null. */
export function recogniserUnavailableReason() {
  return loadError;
}

/**
 * @typedef {{ word: string, startFrame: number, endFrame: number }} Segment
 */

/**
 * Promisify a koffi `.async` call. Koffi passes a typed array to C as a bare
 * pointer and holds no reference to it, so `args` stays reachable from the
 * completion callback: the audio must not be collected while a pool thread
 * still reads it.
 * @param {any} fn @param {any[]} args
 */
function callAsync(fn, ...args) {
  return new Promise((resolve, reject) => {
    fn.async(...args, (/** @type {any} */ err, /** @type {any} */ res) => {
      args.length = 0;
      return err ? reject(err) : resolve(res);
    });
  });
}

/** One pocketsphinx decoder: start an utterance, feed 16 kHz s16, read the hypothesis. */
export class Decoder {
  /** @param {any} handle */
  constructor(handle) {
    this.handle = handle;
    this.inUtterance = false;
    // pocketsphinx numbers segment frames over the decoder's whole life, not per utterance
    // (measured: the same 2.01 s utterance fed three times starts at frame 29, 230, 431), and
    // ends each utterance on a whole frame. These count the frames of earlier utterances, so
    // `segments()` can give frames from the start of the current one.
    this.frameBase = 0;
    this.utteranceSamples = 0;
  }

  startUtterance() {
    if (this.inUtterance) return;
    this.settleFrameBase();
    api.ps_start_utt(this.handle);
    this.inUtterance = true;
    this.utteranceSamples = 0;
  }

  /** Decode a chunk off the event loop. @param {Int16Array} pcm16k */
  async process(pcm16k) {
    this.startUtterance();
    this.utteranceSamples += pcm16k.length;
    await callAsync(api.ps_process_raw, this.handle, pcm16k, pcm16k.length, 0, 0);
  }

  /** Ends pocketsphinx's utterance and moves the frame base past it. */
  endPsUtterance() {
    api.ps_end_utt(this.handle);
    // The partial frame at the end counts as one (10 ms frames of 160 samples at 16 kHz).
    this.nextFrameBase = this.frameBase + Math.ceil(this.utteranceSamples / 160);
  }

  /** The current best word segmentation, fillers (<s>, </s>, <sil>, [NOISE]) left out. @returns {Segment[]} */
  segments() {
    /** @type {Segment[]} */
    const out = [];
    if (!this.inUtterance && !this.finished) return out;
    for (let seg = api.ps_seg_iter(this.handle, [0]); seg; seg = api.ps_seg_next(seg)) {
      const raw = api.ps_seg_word(seg);
      const sf = [0];
      const ef = [0];
      api.ps_seg_frames(seg, sf, ef);
      if (!raw || raw.startsWith("<") || raw.startsWith("[") || raw.startsWith("+")) continue;
      // Alternate pronunciations are spelled "word(2)".
      out.push({ word: raw.replace(/\(\d+\)$/, ""), startFrame: sf[0] - this.frameBase, endFrame: ef[0] - this.frameBase });
    }
    return out;
  }

  /** Ends the utterance; `segments()` then returns the final result until the next start. */
  endUtterance() {
    if (!this.inUtterance) return;
    this.endPsUtterance();
    this.inUtterance = false;
    this.finished = true;
  }

  /** Prepares for reuse by another stream. */
  reset() {
    if (this.inUtterance) this.endPsUtterance();
    this.inUtterance = false;
    this.finished = false;
    this.settleFrameBase();
  }

  /** The finished utterance's segments are read relative to its own base; the next one starts after it. */
  settleFrameBase() {
    if (this.nextFrameBase !== undefined) this.frameBase = this.nextFrameBase;
    this.nextFrameBase = undefined;
  }

  free() {
    api.ps_free(this.handle);
  }
}

/**
 * Creating a decoder loads the 37 MB model (about 0.4 s), so decoders are pooled:
 * `acquire()` reuses an idle one, `release()` gives it back.
 */
export class DecoderPool {
  constructor() {
    /** @type {Decoder[]} */
    this.idle = [];
  }

  /**
   * @param {import("./knobs.mjs").Knobs} [_knobs] the stream's knobs (read by knownSpeechPool)
   * @returns {Promise<Decoder | null>} null when the recogniser is not installed.
   */
  async acquire(_knobs) {
    if (!(await loadApi())) return null;
    const reused = this.idle.pop();
    if (reused) return reused;
    const str = "str";
    const config = api.cmd_ln_init(
      null, api.ps_args(), 1,
      str, "-hmm", str, `${MODEL_DIR}/en-us`,
      str, "-lm", str, `${MODEL_DIR}/en-us.lm.bin`,
      str, "-dict", str, `${MODEL_DIR}/cmudict-en-us.dict`,
      "void *", null,
    );
    const handle = await callAsync(api.ps_init, config);
    if (!handle) throw new Error("ps_init failed (see pocketsphinx model files)");
    return new Decoder(handle);
  }

  /** @param {Decoder} decoder */
  release(decoder) {
    decoder.reset();
    this.idle.push(decoder);
  }

  /** Warm one decoder so the first stream does not wait for the model to load. */
  async prewarm() {
    const d = await this.acquire();
    if (d) this.release(d);
  }

  close() {
    for (const d of this.idle.splice(0)) d.free();
  }
}
