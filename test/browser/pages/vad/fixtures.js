// Loads a VAD test fixture: 16-bit mono PCM after a 44-byte header (written by
// scripts/make-vad-fixtures.mjs) and its JSON labels. Shared by the VAD test
// page and the VAD benchmark's audio program.
export async function loadFixture(name) {
  const [wav, label] = await Promise.all([
    fetch(`/test/fixtures/vad/${name}.wav`).then((r) => r.arrayBuffer()),
    fetch(`/test/fixtures/vad/${name}.json`).then((r) => r.json()),
  ]);
  const pcm = new Int16Array(wav, 44, (wav.byteLength - 44) / 2);
  return { samples: Float32Array.from(pcm, (s) => s / 32768), label };
}
