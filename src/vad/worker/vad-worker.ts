// VAD worker: placeholder so the build has a real entry. The VAD issue fills it
// (Silero through onnxruntime-web, fed by the capture worklet's port).
/// <reference lib="webworker" />
const scope = self as unknown as DedicatedWorkerGlobalScope;
scope.addEventListener("message", (event: MessageEvent) => {
  if (event.data?.kind === "ping") scope.postMessage({ kind: "pong" });
});
