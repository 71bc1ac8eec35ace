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
  // Each processor built with the options its SDK class passes (a node built without them fails,
  // by design, with an error naming them: worklets/processor-options.ts); none may fail.
  const processorErrors = [];
  const nodes = [
    new AudioWorkletNode(context, "bargein-playback", { numberOfInputs: 0, outputChannelCount: [1], processorOptions: { capacity: context.sampleRate, prebufferSamples: 0, fadeSamples: 64 } }),
    new AudioWorkletNode(context, "bargein-capture", { numberOfOutputs: 0, processorOptions: { vad: true, meterIntervalMs: 50 } }),
  ];
  for (const node of nodes) node.onprocessorerror = () => processorErrors.push(node.constructor.name);
  nodes[0].connect(context.destination);
  await context.resume().catch(() => {});
  // The processors are built before the first quantum renders; a constructor's error is posted then.
  const start = context.currentTime;
  while (context.currentTime < start + 0.1) await new Promise((resolve) => setTimeout(resolve, 10));
  for (const node of nodes) node.disconnect();
  await context.close();

  const worker = new Worker("/dist/vad-worker.js", { type: "module" });
  const pong = await new Promise((resolve, reject) => {
    worker.onmessage = (e) => resolve(e.data.kind);
    worker.onerror = (e) => reject(new Error(e.message));
    worker.postMessage({ kind: "ping" });
  });
  worker.terminate();
  return { version: VERSION, liveBefore, liveAfter: manager.names, pong, processorErrors };
})();
