// Child process for test/backend/decoder-threads.test.ts: for SECONDS, WORKERS
// streams at a time, each on a decoder of its own that it creates (ps_init on
// koffi's worker threads) and frees, decoding a spoken fixture chunk by chunk
// (ps_process_raw on the worker threads) and ending the utterance on this
// thread; beside them as many churners that create a decoder, decode one chunk,
// end and free it, over and over. Prints one JSON line: how many utterances,
// and the words of any that came out wrong. Run in a child so that a native
// crash is an exit signal the test can report, not a lost test worker.
import { readFileSync } from "node:fs";
import { DecoderPool } from "../../demo/server/pocketsphinx.mjs";
import { readWav } from "../../demo/server/wav.mjs";

const [seconds, workers] = [Number(process.env.SECONDS ?? 8), Number(process.env.WORKERS ?? 6)];
const speech = readWav(readFileSync(new URL("../fixtures/speech/weather-question.wav", import.meta.url))).samples;
const expected = "what is the weather like today";
const CHUNK = 1280;

const pool = new DecoderPool();
const until = Date.now() + seconds * 1000;
const result = { utterances: 0, churned: 0, wrong: /** @type {string[]} */ ([]) };

/** A decoder of its own (never one from the pool's idle list: each loads its model). */
async function newDecoder() {
  const decoder = await pool.acquire();
  if (!decoder) throw new Error("no recogniser");
  return decoder;
}

async function stream() {
  while (Date.now() < until) {
    const decoder = await newDecoder();
    // A fresh copy per chunk that nothing else holds: only the call keeps it alive.
    for (let at = 0; at < speech.length; at += CHUNK) await decoder.process(speech.slice(at, at + CHUNK));
    decoder.endUtterance();
    const words = decoder.segments().map((s) => s.word).join(" ");
    if (words !== expected) result.wrong.push(words);
    result.utterances++;
    decoder.free();
  }
}

/** Model loads and short utterances back to back: the most calls that log. */
async function churn() {
  while (Date.now() < until) {
    const decoder = await newDecoder();
    await decoder.process(speech.slice(0, CHUNK));
    decoder.endUtterance();
    decoder.free();
    result.churned++;
  }
}

await Promise.all([...Array.from({ length: workers }, stream), ...Array.from({ length: workers }, churn)]);
console.log(JSON.stringify(result));
