// Imports the ESM bundle and loads each worklet and the VAD worker from dist/,
// all under the page's strict CSP (no unsafe-eval, no blob:).
import { Quest, QuestManager } from "/dist/advanced.js";
import { VERSION } from "/dist/bargein.js";

window.smoke = (async () => {
  const manager = new QuestManager();
  const quest = Quest.fromRunStep("llm", (signal) => new Promise((r) => signal.addEventListener("abort", r)));
  await manager.add(quest);
  const liveBefore = manager.names;
  await manager.remove("llm");

  const context = new AudioContext();
  await context.audioWorklet.addModule("/dist/capture-worklet.js");
  await context.audioWorklet.addModule("/dist/playback-worklet.js");
  const node = new AudioWorkletNode(context, "bargein-playback");
  node.disconnect();
  await context.close();

  const worker = new Worker("/dist/vad-worker.js", { type: "module" });
  const pong = await new Promise((resolve, reject) => {
    worker.onmessage = (e) => resolve(e.data.kind);
    worker.onerror = (e) => reject(new Error(e.message));
    worker.postMessage({ kind: "ping" });
  });
  worker.terminate();
  return { version: VERSION, liveBefore, liveAfter: manager.names, pong };
})();
