// A worker standing in for the VAD worker: it pauses and resumes playback by
// token, as the VAD worker does, through the player's shared control block
// (with the SDK's own playback-control functions) when given one, else
// through the player's control port. Answers each command once it is sent.
import { flushPlayback, pausePlayback, playbackControl, resumePlayback } from "/dist/advanced.js";

let port;
let control;
self.onmessage = (e) => {
  const m = e.data;
  if (m.kind === "attach") {
    port = m.port;
    control = m.buffer ? playbackControl(m.buffer) : undefined;
    self.postMessage({ kind: "attached" });
    return;
  }
  if (control) {
    if (m.kind === "pause") pausePlayback(control, m.token);
    if (m.kind === "resume") resumePlayback(control, m.token);
    if (m.kind === "flush") flushPlayback(control);
  } else if (m.kind === "flush") {
    port.postMessage({ kind: "flush" });
  } else {
    port.postMessage({ kind: m.kind, token: m.token, sampleIndex: 0 });
  }
  self.postMessage({ kind: "done" });
};
