// Playback processor: placeholder registered so the build has a real entry.
// The Audio engine issue fills it (ring buffer, flush, pause/resume, generation fence).
class PlaybackProcessor extends AudioWorkletProcessor {
  process(): boolean {
    return true;
  }
}
registerProcessor("bargein-playback", PlaybackProcessor);
