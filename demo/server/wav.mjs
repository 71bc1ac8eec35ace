// Minimal RIFF/WAVE PCM s16 reader and writer (mono), for flite's output and the fixtures.

/**
 * @param {Uint8Array} bytes
 * @returns {{ sampleRate: number, channels: number, samples: Int16Array }}
 */
export function readWav(bytes) {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const tag = (/** @type {number} */ at) => String.fromCharCode(...bytes.subarray(at, at + 4));
  if (tag(0) !== "RIFF" || tag(8) !== "WAVE") throw new Error("not a RIFF/WAVE file");
  let offset = 12;
  let sampleRate = 0;
  let channels = 0;
  let bits = 0;
  while (offset + 8 <= bytes.length) {
    const id = tag(offset);
    const size = view.getUint32(offset + 4, true);
    const body = offset + 8;
    if (id === "fmt ") {
      channels = view.getUint16(body + 2, true);
      sampleRate = view.getUint32(body + 4, true);
      bits = view.getUint16(body + 14, true);
    } else if (id === "data") {
      if (bits !== 16) throw new Error(`unsupported WAV: ${bits} bits (want 16)`);
      const end = Math.min(bytes.length, body + size);
      // Copy (Buffer#slice would be a view into a shared pool) so the samples are aligned and owned.
      const copy = new Uint8Array(bytes.subarray(body, end - ((end - body) % 2)));
      return { sampleRate, channels, samples: new Int16Array(copy.buffer) };
    }
    offset = body + size + (size % 2);
  }
  throw new Error("WAV has no data chunk");
}

/**
 * @param {Int16Array} samples mono
 * @param {number} sampleRate
 * @returns {Uint8Array}
 */
export function writeWav(samples, sampleRate) {
  const out = new Uint8Array(44 + samples.byteLength);
  const view = new DataView(out.buffer);
  const put = (/** @type {number} */ at, /** @type {string} */ s) => {
    for (let i = 0; i < 4; i++) out[at + i] = s.charCodeAt(i);
  };
  put(0, "RIFF");
  view.setUint32(4, 36 + samples.byteLength, true);
  put(8, "WAVE");
  put(12, "fmt ");
  view.setUint32(16, 16, true);
  view.setUint16(20, 1, true);
  view.setUint16(22, 1, true);
  view.setUint32(24, sampleRate, true);
  view.setUint32(28, sampleRate * 2, true);
  view.setUint16(32, 2, true);
  view.setUint16(34, 16, true);
  put(36, "data");
  view.setUint32(40, samples.byteLength, true);
  out.set(new Uint8Array(samples.buffer, samples.byteOffset, samples.byteLength), 44);
  return out;
}
