// A worker standing in for the VAD worker: it drives playback directly,
// through the player's control port or its shared control block.
let port;
let control;
self.onmessage = (e) => {
  const m = e.data;
  if (m.kind === "attach") {
    port = m.port;
    control = m.buffer ? new Int32Array(m.buffer) : undefined;
    self.postMessage({ kind: "attached" });
    return;
  }
  // PlaybackSlot: PAUSED = 0, FLUSH_SEQ = 1 (src/protocol/audio-messages.ts).
  if (control) {
    if (m.kind === "pause") Atomics.store(control, 0, 1);
    if (m.kind === "resume") Atomics.store(control, 0, 0);
    if (m.kind === "flush") Atomics.add(control, 1, 1);
  } else {
    port.postMessage({ kind: m.kind });
  }
  self.postMessage({ kind: "done" });
};
