// Records what the page opens, before any module runs (a classic script runs
// before the deferred module scripts): getUserMedia calls and their tracks,
// WebSockets, Workers (and whether terminate() was called on them),
// AudioContexts and AudioWorkletNodes. `window.openedReport()` reads their
// state now, as plain data for the test.
(() => {
  const opened = { getUserMedia: 0, tracks: [], sockets: [], workers: [], contexts: [], nodes: [] };
  window.opened = opened;

  const media = navigator.mediaDevices;
  const getUserMedia = media.getUserMedia.bind(media);
  media.getUserMedia = async (constraints) => {
    opened.getUserMedia++;
    const stream = await getUserMedia(constraints);
    opened.tracks.push(...stream.getTracks());
    return stream;
  };
  const clone = MediaStreamTrack.prototype.clone;
  MediaStreamTrack.prototype.clone = function () {
    const track = clone.call(this);
    opened.tracks.push(track);
    return track;
  };

  window.WebSocket = class extends window.WebSocket {
    constructor(...args) {
      super(...args);
      opened.sockets.push(this);
    }
  };
  window.Worker = class extends window.Worker {
    constructor(...args) {
      super(...args);
      this.terminated = false;
      opened.workers.push(this);
    }
    terminate() {
      this.terminated = true;
      super.terminate();
    }
  };
  window.AudioContext = class extends window.AudioContext {
    constructor(...args) {
      super(...args);
      opened.contexts.push(this);
    }
  };
  window.AudioWorkletNode = class extends window.AudioWorkletNode {
    constructor(context, name, options) {
      super(context, name, options);
      this.processorName = name;
      opened.nodes.push(this);
    }
  };

  window.openedReport = () => ({
    getUserMedia: opened.getUserMedia,
    tracks: opened.tracks.map((t) => ({ kind: t.kind, readyState: t.readyState })),
    sockets: opened.sockets.map((s) => ({ url: s.url, readyState: s.readyState })),
    workers: opened.workers.map((w) => ({ terminated: w.terminated })),
    contexts: opened.contexts.map((c) => c.state),
    nodes: opened.nodes.map((n) => ({ processor: n.processorName, context: n.context.state })),
  });
})();
