// The output node a test or bench page gives a session (`audio.output`): a gain
// that plays to the speakers and also feeds the page's own recorder worklet,
// so the page can read back the samples that were played.
export async function recordedOutput(context, { module, processor, seconds }) {
  await context.audioWorklet.addModule(module);
  const output = context.createGain();
  const recorder = new AudioWorkletNode(context, processor, {
    numberOfInputs: 1,
    numberOfOutputs: 0,
    processorOptions: { capacity: context.sampleRate * seconds },
  });
  output.connect(context.destination);
  output.connect(recorder);
  return { output, recorder };
}
