// Runs the four built-in providers from the ESM bundle in Chromium, against the
// reference backend that serves this page (same origin), under the strict CSP.
// Each scenario returns plain values for the spec to assert on.
import { kyutaiStt, kyutaiTts, openaiChat, websocketLlm } from "/dist/bargein.js";
import { sleep } from "/test/lib/wait.mjs";

const ws = `ws://${location.host}`;
const http = `http://${location.host}`;
const stats = async () => (await fetch("/__stats")).json();
const failure = async (promise) => {
  try {
    await promise;
    return "resolved";
  } catch (err) {
    return err.name;
  }
};

async function roundTrip(sentence) {
  const tts = await kyutaiTts({ urls: `${ws}?pace=0`, voice: "slt" }).connect();
  tts.sendText(sentence);
  tts.end();
  const chunks = [];
  const spoken = [];
  for await (const e of tts.events()) {
    if (e.kind === "audio") chunks.push(e.pcm);
    else spoken.push(e.text);
  }
  // A pooled decoder answers in ms; loading a fresh one can take about 1 s.
  const stt = await kyutaiStt({ urls: ws, warmupSteps: 0, startupTimeoutMs: 3000 }).connect();
  const words = [];
  const reading = (async () => {
    for await (const e of stt.events()) if (e.kind === "word") words.push(e.text.toLowerCase());
  })();
  for (const c of chunks) stt.sendAudio(c);
  stt.sendAudio(new Float32Array(14400));
  await stt.flush(AbortSignal.timeout(15000));
  await stt.close();
  await reading;
  const samples = chunks.reduce((n, c) => n + c.length, 0);
  return { seconds: samples / 24000, fullFrames: chunks.slice(0, -1).every((c) => c.length === 1920), spoken, words };
}

async function llmBothWays() {
  const messages = [{ role: "user", content: "I feel tired of waiting for the bus." }];
  const sse = [];
  for await (const d of openaiChat({ url: `${http}/v1`, model: "bargein-eliza" }).stream(messages)) sse.push(d);
  const socket = [];
  for await (const d of websocketLlm({ url: `${ws}/v1/responses` }).stream(messages)) socket.push(d);

  const before = (await stats()).llm.requestsAborted;
  const aborted = [];
  for (const llm of [openaiChat({ url: `${http}/v1?word_ms=50`, model: "m" }), websocketLlm({ url: `${ws}/v1/responses?word_ms=50` })]) {
    const controller = new AbortController();
    aborted.push(
      await failure(
        (async () => {
          for await (const _ of llm.stream(messages, controller.signal)) controller.abort();
        })(),
      ),
    );
  }
  let after = before;
  for (let i = 0; i < 100 && after < before + 2; i++) {
    await sleep(10);
    after = (await stats()).llm.requestsAborted;
  }
  return { sse, socket, aborted, abortedOnServer: after - before };
}

async function failures() {
  const started = performance.now();
  const noSuchPath = await failure(kyutaiStt({ urls: ws, path: "/no/such/socket" }).connect());
  const handshakeMs = performance.now() - started;
  return {
    capacity: await failure(kyutaiStt({ urls: `${ws}?capacity=0` }).connect()),
    slowStartup: await failure(kyutaiStt({ urls: `${ws}?delay_ms=1500`, startupTimeoutMs: 500 }).connect()),
    noSuchPath,
    handshakeMs,
    malformed: await failure(
      kyutaiStt({ urls: `${ws}?malformed=1`, startupTimeoutMs: 3000 })
        .connect()
        .then(async (s) => {
          for await (const _ of s.events());
        }),
    ),
  };
}

window.providers = (async () => ({
  roundTrip: await roundTrip("what is the weather like today"),
  llm: await llmBothWays(),
  failures: await failures(),
}))();
