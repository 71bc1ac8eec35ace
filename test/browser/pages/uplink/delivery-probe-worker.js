// A dedicated worker that receives the capture worklet's VAD frames on a port
// (as the VAD worker does) and writes down when each arrived, on the absolute
// clock (timeOrigin + now) that the page's main thread shares: what an uplink
// living in a worker would have seen, frame for frame.
let arrivals = [];

self.onmessage = (e) => {
  if (e.data.kind === "port") {
    e.data.port.onmessage = (m) => {
      if (m.data.kind === "vad-frame") arrivals.push([m.data.contextTime, performance.timeOrigin + performance.now()]);
    };
  } else if (e.data.kind === "report") {
    self.postMessage({ arrivals });
    arrivals = [];
  }
};
