// Builds test/fixtures/noise/: real recordings of room sounds that are not
// speech (issue #40), cut from Debian packages whose copyright files allow
// their redistribution. Each clip is 16 kHz mono s16 WAV with a JSON sidecar
// saying where it comes from (package, version, file in the package, licence,
// copyright holder) and how it was cut, and README.md lists them all.
//
// Needs network access for `apt-get download` (run `apt-get update` first),
// dpkg-deb and sox. Nothing is installed: each package is unpacked into a
// temporary folder. The same package versions give the same clips.
//
//   node scripts/make-noise-fixtures.mjs
//
// Labels, as the speech fixtures have them (say() in the bench pages reads
// them): `onsetSamples`/`offsetSamples`, the first and last 5 ms window
// within −20 dB of the clip's loudest; `loudestDbfs`, the RMS of its loudest
// 100 ms, the measure by which the noise bench sets a clip's level, and
// `peakDbfs`, which bounds how far it can be raised.
import { execFileSync } from "node:child_process";
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { writeWav } from "../demo/server/wav.mjs";
import { prng } from "../test/lib/prng.mjs";
import { inflateSync } from "node:zlib";

const RATE = 16000;
const OUT = new URL("../test/fixtures/noise/", import.meta.url);
/** Fades at both cuts (s): a cut mid-sound would otherwise be a click, an onset the recording never had. */
const FADE_S = 0.01;

const LINCITY_SOUNDS = "usr/share/games/lincity-ng/sounds";
const LINCITY = { licence: "GPL-2+ or CC-BY-SA-2.0 (dual-licensed; see CREDITS)", copyright: "the LinCity-NG authors (sound and music: Paulo Augusto, Robert van Herk, Pronobozo)" };
const FREEDESKTOP = { licence: "GPL-2+", copyright: "Damien Sandras <dsandras@seconix.com>" };
const GCOMPRIS = "usr/share/gcompris-qt/rcc";

/**
 * The clips. `file`: the file in the package (`rcc`: a Qt resource bundle,
 * `member` the file inside it); `trim`: [start, length] in s of the original.
 */
const CLIPS = [
  {
    name: "typing-model-m",
    kind: "keyboard typing",
    package: "bucklespring-data",
    file: "usr/share/buckle/wav/*-0.wav, *-1.wav",
    licence: "GPL-2+",
    copyright: "2016 Ico Doornekampt",
    typing: { seconds: 2.0, seed: 40 },
    note: "key presses and releases of an IBM Model M, each recorded on its own, put in a 2 s burst at a typist's pace (seeded, 7–10 keys/s)",
  },
  {
    name: "door-close",
    kind: "door",
    package: "gcompris-qt-data",
    file: `${GCOMPRIS}/canal_lock.rcc`,
    member: "gcompris/src/activities/canal_lock/resource/door_close.wav",
    trim: [1.9, 1.4],
    licence: "CC0-1.0",
    copyright: "lolamadeus (freesound.org sound 161230)",
    note: "a door pushed shut: the latch and the slam",
  },
  {
    name: "door-open",
    kind: "door",
    package: "gcompris-qt-data",
    file: `${GCOMPRIS}/canal_lock.rcc`,
    member: "gcompris/src/activities/canal_lock/resource/door_open.wav",
    trim: [0, 1.5],
    licence: "CC0-1.0",
    copyright: "lolamadeus (freesound.org sound 161228)",
    note: "a handle turned and a door opened",
  },
  {
    name: "knock",
    kind: "knock",
    package: "gcompris-qt-data",
    file: `${GCOMPRIS}/melody.rcc`,
    member: "gcompris/src/activities/melody/resource/knock.wav",
    trim: [0, 0.8],
    licence: "GPL-3",
    copyright: "2000, 2008 Bruno Coudoin and others",
    note: "three knocks on wood",
  },
  {
    name: "applause",
    kind: "applause",
    package: "gcompris-qt-data",
    file: `${GCOMPRIS}/memory-sound.rcc`,
    member: "gcompris/src/activities/memory-sound/resource/LRApplauses_1_LA_cut.ogg",
    trim: [0, 3.2],
    licence: "Free Art License 1.2 (the Licence.txt shipped beside it; Debian's copyright file covers it by its catch-all GPL-3+ stanza)",
    copyright: "GCompris (author not named in the package)",
    note: "a small audience clapping",
  },
  {
    name: "cough",
    kind: "cough",
    package: "hedgewars-data",
    file: "usr/share/games/hedgewars/Data/Sounds/voices/Default_es/PoisonCough.ogg",
    trim: [0.3, 1.5],
    licence: "GFDL-1.3",
    copyright: "2004–2006 Andrey Korotaev and the Hedgewars voice contributors",
    note: "a fit of four coughs by a man's voice",
  },
  {
    name: "phone-ring",
    kind: "phone ring",
    package: "sound-theme-freedesktop",
    file: "usr/share/sounds/freedesktop/stereo/phone-incoming-call.oga",
    trim: [0, 1.46],
    ...FREEDESKTOP,
    note: "one ring of a phone's incoming call",
  },
  {
    name: "notification",
    kind: "notification tone",
    package: "sound-theme-freedesktop",
    file: "usr/share/sounds/freedesktop/stereo/message-new-instant.oga",
    trim: [0, 1.03],
    ...FREEDESKTOP,
    note: "a chat message's chime",
  },
  {
    name: "music",
    kind: "music",
    package: "lincity-ng-data",
    file: "usr/share/games/lincity-ng/music/default/02 - Robert van Herk - City Blues.ogg",
    trim: [20, 4],
    ...LINCITY,
    copyright: "Robert van Herk (LinCity-NG)",
    note: "4 s of a blues band, started mid-piece (music switched on)",
  },
  {
    name: "babble",
    kind: "crowd babble",
    package: "lincity-ng-data",
    file: `${LINCITY_SOUNDS}/MarketFull1.wav`,
    trim: [0, 4],
    ...LINCITY,
    note: "the murmur of a busy market: many voices, no word clear",
  },
];

const work = mkdtempSync(join(tmpdir(), "noise-fixtures-"));
try {
  const versions = fetchPackages([...new Set(CLIPS.map((c) => c.package))]);
  const rows = [];
  for (const clip of CLIPS) {
    const samples = clip.typing ? typingBurst(clip.typing) : cut(clip);
    const pcm = Int16Array.from(samples, (s) => Math.max(-32768, Math.min(32767, Math.round(s * 32768))));
    writeFileSync(new URL(`${clip.name}.wav`, OUT), writeWav(pcm, RATE));
    const { onset, offset } = envelope(samples);
    const sidecar = {
      file: `${clip.name}.wav`,
      kind: clip.kind,
      sampleRate: RATE,
      samples: samples.length,
      onsetSamples: onset,
      offsetSamples: offset,
      loudestDbfs: round1(loudestDb(samples)),
      peakDbfs: round1(20 * Math.log10(samples.reduce((m, v) => Math.max(m, Math.abs(v)), 0))),
      words: [],
      source: { package: clip.package, version: versions.get(clip.package), file: clip.member ? `${clip.file} → ${clip.member}` : clip.file, licence: clip.licence, copyright: clip.copyright },
      processing: clip.typing
        ? clip.note
        : `${clip.trim[0]}–${clip.trim[0] + clip.trim[1]} s of the original, downmixed to mono and resampled to 16 kHz (sox), ${FADE_S * 1000} ms fades at the cuts; ${clip.note}`,
    };
    writeFileSync(new URL(`${clip.name}.json`, OUT), JSON.stringify(sidecar, null, 2) + "\n");
    rows.push(sidecar);
    console.log(`${clip.name}.wav  ${(samples.length / RATE).toFixed(2)} s  loudest ${sidecar.loudestDbfs} dBFS`);
  }
  writeFileSync(new URL("README.md", OUT), readme(rows));
  copyLicences();
} finally {
  rmSync(work, { recursive: true, force: true });
}

/**
 * The licences' full texts, which GPL, GFDL and the Free Art License ask to
 * travel with the copies: Debian's common-licenses, and the Free Art License
 * from beside the GCompris sounds.
 */
function copyLicences() {
  const dir = new URL("licenses/", OUT);
  mkdirSync(dir, { recursive: true });
  for (const name of ["GPL-2", "GPL-3", "GFDL-1.3", "CC0-1.0"]) copyFileSync(`/usr/share/common-licenses/${name}`, new URL(`${name}.txt`, dir));
  const bundle = readFileSync(join(work, "root", GCOMPRIS, "memory-sound.rcc"));
  writeFileSync(new URL("FAL-1.2.txt", dir), readQtResource(bundle, "gcompris/src/activities/memory-sound/resource/Licence.txt"));
}

/** Downloads and unpacks each package into the work folder; returns package → version. */
function fetchPackages(names) {
  const versions = new Map();
  execFileSync("apt-get", ["download", ...names], { cwd: work, stdio: ["ignore", "ignore", "inherit"] });
  for (const name of names) {
    const deb = execFileSync("sh", ["-c", `ls ${name}_*.deb`], { cwd: work, encoding: "utf8" }).trim().split("\n")[0];
    execFileSync("dpkg-deb", ["-x", deb, "root"], { cwd: work });
    versions.set(name, execFileSync("dpkg-deb", ["-f", deb, "Version"], { cwd: work, encoding: "utf8" }).trim());
  }
  return versions;
}

/** A clip: its original file (out of a Qt resource bundle when it is in one), cut and converted by sox. */
function cut(clip) {
  let input = join(work, "root", clip.file);
  if (clip.member) {
    input = join(work, clip.member.split("/").pop());
    writeFileSync(input, readQtResource(readFileSync(join(work, "root", clip.file)), clip.member));
  }
  const [start, length] = clip.trim;
  return sox([input, "-t", "f32", "-r", String(RATE), "-c", "1", "-", "remix", "-", "trim", String(start), String(length), "fade", "t", String(FADE_S), "-0", String(FADE_S)]);
}

/** Keys pressed at a typist's pace, each press followed by its release, from bucklespring's recordings. */
function typingBurst({ seconds, seed }) {
  const random = prng(seed);
  const dir = join(work, "root/usr/share/buckle/wav");
  const keys = execFileSync("sh", ["-c", "ls *-0.wav"], { cwd: dir, encoding: "utf8" }).trim().split("\n").map((f) => f.slice(0, 2));
  const out = new Float32Array(Math.round(seconds * RATE));
  let at = 0.05;
  while (at < seconds - 0.3) {
    const key = keys[Math.floor(random() * keys.length)];
    const held = 0.06 + 0.05 * random();
    add(out, sox([join(dir, `${key}-0.wav`), "-t", "f32", "-r", String(RATE), "-c", "1", "-"]), at);
    add(out, sox([join(dir, `${key}-1.wav`), "-t", "f32", "-r", String(RATE), "-c", "1", "-"]), at + held);
    at += 0.1 + 0.043 * random();
  }
  return out;
}

function add(out, samples, atS) {
  const from = Math.round(atS * RATE);
  for (let i = 0; i < samples.length && from + i < out.length; i++) out[from + i] += samples[i];
}

function sox(args) {
  const bytes = execFileSync("sox", ["-V1", ...args], { maxBuffer: 64 << 20 });
  return new Float32Array(bytes.buffer, bytes.byteOffset, bytes.byteLength / 4).slice();
}

/** The first and last 5 ms window within −20 dB of the loudest, in samples. */
function envelope(samples) {
  const w = RATE * 0.005;
  const rms = [];
  for (let i = 0; i + w <= samples.length; i += w) rms.push(Math.sqrt(meanSquare(samples, i, i + w)));
  const threshold = 0.1 * Math.max(...rms);
  const first = rms.findIndex((v) => v >= threshold);
  const last = rms.findLastIndex((v) => v >= threshold);
  return { onset: first * w, offset: (last + 1) * w };
}

/** RMS of the loudest 100 ms (dBFS), in 10 ms steps. */
function loudestDb(samples) {
  const span = RATE * 0.1;
  let loudest = 0;
  for (let i = 0; i + span <= samples.length; i += RATE * 0.01) loudest = Math.max(loudest, meanSquare(samples, i, i + span));
  return 10 * Math.log10(loudest);
}

function meanSquare(samples, from, to) {
  let sum = 0;
  for (let i = from; i < to; i++) sum += samples[i] * samples[i];
  return sum / (to - from);
}

/**
 * One file out of a Qt resource bundle (.rcc), as GCompris ships its
 * activities' sounds. The layout (Qt's rcc format, versions 1–3): a header
 * (magic "qres", version, then the offsets of the tree, the data and the
 * names, big-endian); tree nodes of 14 bytes (22 from version 2): the name's
 * offset, flags (2: a folder; 1: zlib-compressed), then a folder's child count
 * and first child, or a file's locale and data offset. Names are UTF-16BE after
 * a length and a hash; data is a length, then the bytes (zlib data starts with
 * its own 4-byte unpacked length).
 */
function readQtResource(bytes, member) {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (bytes.toString("ascii", 0, 4) !== "qres") throw new Error("not a Qt resource bundle");
  const version = view.getUint32(4);
  const [tree, data, names] = [view.getUint32(8), view.getUint32(12), view.getUint32(16)];
  const nodeSize = version === 1 ? 14 : 22;
  const nameAt = (offset) => Buffer.from(bytes.subarray(names + offset + 6, names + offset + 6 + 2 * view.getUint16(names + offset))).swap16().toString("utf16le");
  let node = 0;
  for (const part of member.split("/")) {
    const at = tree + node * nodeSize;
    const [count, first] = [view.getUint32(at + 6), view.getUint32(at + 10)];
    const child = Array.from({ length: count }, (_, i) => first + i).find((n) => nameAt(view.getUint32(tree + n * nodeSize)) === part);
    if (child === undefined) throw new Error(`${member}: no "${part}" in the bundle`);
    node = child;
  }
  const at = tree + node * nodeSize;
  const flags = view.getUint16(at + 4);
  const offset = data + view.getUint32(at + 10);
  const body = bytes.subarray(offset + 4, offset + 4 + view.getUint32(offset));
  return flags & 1 ? inflateSync(body.subarray(4)) : body;
}

function round1(v) {
  return Math.round(v * 10) / 10;
}

function readme(rows) {
  const table = rows.map((r) => `| \`${r.file}\` | ${r.kind} | ${(r.samples / RATE).toFixed(2)} | ${r.loudestDbfs} | ${r.source.package} ${r.source.version}: \`${r.source.file}\` | ${r.source.licence} | ${r.source.copyright} |`);
  return `# Room sounds that are not speech

Real recordings of what a room hears while a voice agent talks: typing, doors,
a knock, applause, a cough, a phone, a chat notification, music and a crowd.
The noise bench (\`npm run bench -- noise\`, issue #40) plays them into the
microphone over the bot's reply and counts what they cost the listener.

Each clip is 16 kHz mono 16-bit WAV with a JSON sidecar: its kind, its source
(Debian package and version, the file in the package, its licence and
copyright holder, as the package's \`/usr/share/doc/<package>/copyright\` file
gives them), how it was cut, and its labels (\`onsetSamples\`/\`offsetSamples\`:
the first and last 5 ms window within −20 dB of its loudest; \`loudestDbfs\`:
the RMS of its loudest 100 ms). Made by \`node scripts/make-noise-fixtures.mjs\`
(written by that script: edit the script, not this file).

| file | kind | s | loudest dBFS | source | licence | copyright |
| --- | --- | --- | --- | --- | --- | --- |
${table.join("\n")}

Every licence here allows redistribution with attribution, which this file and
the sidecars give: CC0-1.0 (public domain dedication), GPL-2+, GPL-3, GFDL-1.3,
the Free Art License 1.2 (copyleft, like CC-BY-SA;
https://artlibre.org/licence/lal/en/) and GPL-2+ or CC-BY-SA-2.0 (used here
under GPL-2+, as Debian does). Their full texts are in \`licenses/\`.
These clips are test data: they are not part of the published package
(\`package.json\` \`files\`), and the SDK's MIT licence does not cover them; each
keeps its own.

Room impulse responses: none is here. No Debian package found carries a
measured room impulse response under a licence that allows it (\`drc\` ships
none, \`jconvolver\` only configurations, \`soundscaperenderer-common\` head-related
responses measured without a room).
`;
}
