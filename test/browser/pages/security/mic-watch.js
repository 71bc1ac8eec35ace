// Loaded before any SDK code: keeps every MediaStream that getUserMedia hands
// out, so a test can read its tracks' readyState after the session let go.
(() => {
  const media = navigator.mediaDevices;
  const real = media.getUserMedia.bind(media);
  window.micStreams = [];
  media.getUserMedia = async (constraints) => {
    const stream = await real(constraints);
    window.micStreams.push(stream);
    return stream;
  };
  window.unhandled = [];
  window.addEventListener("unhandledrejection", (e) => window.unhandled.push(String(e.reason?.message ?? e.reason)));
})();
