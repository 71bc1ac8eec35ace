// The test recorder (recorder-worklet.js) as a node: mono in, mono out, room
// for `seconds` of the context's audio; `clock`: an optional SharedArrayBuffer
// where it publishes the frame it renders. The page must have added the
// worklet module first. Shared by the audio, VAD and loopback test pages.
export function recorderNode(context, seconds, clock) {
  return new AudioWorkletNode(context, "test-recorder", {
    numberOfInputs: 1,
    numberOfOutputs: 1,
    outputChannelCount: [1],
    channelCount: 1,
    channelCountMode: "explicit",
    processorOptions: { capacity: Math.ceil(context.sampleRate * seconds), clock },
  });
}

/** Everything the recorder kept: `{ startFrame, gaps, samples }`. */
export function snapshot(recorder) {
  return new Promise((resolve) => {
    recorder.port.onmessage = (e) => resolve(e.data);
    recorder.port.postMessage({ kind: "snapshot" });
  });
}
