// Capture processor: placeholder registered so the build has a real entry.
// The Audio engine issue fills it (resampling to 16 kHz VAD frames and uplink frames).
class CaptureProcessor extends AudioWorkletProcessor {
  process(): boolean {
    return true;
  }
}
registerProcessor("bargein-capture", CaptureProcessor);
