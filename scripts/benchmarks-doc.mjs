// `npm run docs:benchmarks`: writes docs/benchmarks.md from bench/results/*.json.
// One section per results file: the bench, when it ran and on what (as the file
// records it, else "not recorded"), and a compact table of its headline figures.
// The figures are read from the JSON, never typed by hand; a bench with no
// curated headlines gets its top-level numbers. Plain Node ESM, no dependencies.
import { readFileSync, readdirSync, writeFileSync } from "node:fs";

const root = new URL("../", import.meta.url);
const resultsDir = new URL("bench/results/", root);
const out = new URL("docs/benchmarks.md", root);
const MAX_CELL = 200;

// ---- formatting -------------------------------------------------------------

const num = (v) => (typeof v === "number" ? v.toLocaleString("en-US", { maximumFractionDigits: 2 }) : v == null ? "—" : String(v));
const ms = (v) => (v == null ? "—" : `${num(v)} ms`);
const pct = (v) => (typeof v === "number" ? `${Math.round(v * 1000) / 10} %` : "—");
/** "p50 X / p95 Y (max Z) ms" from a { p50, p95, max } object. */
const dist = (o, unit = "ms") => {
  if (!o || typeof o !== "object") return undefined;
  const parts = [];
  if (o.p50 !== undefined) parts.push(`p50 ${num(o.p50)}`);
  if (o.p95 !== undefined) parts.push(`p95 ${num(o.p95)}`);
  if (o.max !== undefined) parts.push(`max ${num(o.max)}`);
  if (o.mean !== undefined && o.p50 === undefined) parts.push(`mean ${num(o.mean)}`);
  return parts.length ? `${parts.join(" / ")}${unit ? ` ${unit}` : ""}` : undefined;
};
const cell = (s) => {
  const text = String(s).replace(/\|/g, "\\|").replace(/\s+/g, " ").trim();
  return text.length > MAX_CELL ? `${text.slice(0, MAX_CELL - 1)}…` : text;
};

// ---- headlines per bench ----------------------------------------------------
// Each row: [what, (json) => result string or undefined]. A row whose value is
// missing (an older file, a partial run) is left out.

/** @type {Record<string, Array<[string, (j: any) => string | undefined]>>} */
const HEADLINES = {
  bargein: [
    ["user's speech onset → bot output silent (flite speech)", (j) => dist(j.onsetToPauseMs) && `${dist(j.onsetToPauseMs)} over ${num(j.trials)} barge-ins`],
    ["the same decided server-side from STT words", (j) => dist(j.serverDriven?.onsetToSilenceMs) && `${dist(j.serverDriven.onsetToSilenceMs)}; browser-side is ${num(j.speedup)}× faster`],
    ["onset → silent, main thread busy", (j) => dist(j.mainThreadLoad?.onsetToPauseMs) && `${dist(j.mainThreadLoad.onsetToPauseMs)}; direct pauses ${j.mainThreadLoad.directPauses}`],
    ["onset → silent on recordings of real people", (j) => dist(j.humanSpeech?.onsetToPauseMs) && `${dist(j.humanSpeech.onsetToPauseMs)} (${j.humanSpeech.goal ?? "no goal recorded"})`],
    ["Silero's own speech start after the onset", (j) => dist(j.onsetToVadSpeechStartMs)],
    ["stale samples after the fence", (j) => num(j.staleSamples)],
    ["heard-word error (kept words vs words played)", (j) => j.heardWordError && `mean ${num(j.heardWordError.mean)}, max ${num(j.heardWordError.max)}`],
  ],
  audio: [
    ["flush → silence", (j) => dist(j.flushToSilenceSamples, "samples")],
    ["stale samples after a fence", (j) => num(j.staleSamplesAfterFence)],
    ["samples lost over pause/resume cycles", (j) => num(j.pauseResumeLostSamples)],
    ["underruns in 60 s", (j) => num(j.underruns60s)],
    ["worklet time per quantum (capture / playback, p50)", (j) => j.processTimeUs && `${num(j.processTimeUs.capture?.p50)} / ${num(j.processTimeUs.playback?.p50)} µs`],
  ],
  coldstart: [
    ["start() → listening at 10 Mbit/s, 40 ms RTT: cold / warm", (j) => j.cold && `cold ${dist(j.cold.startToListeningMs)}; warm ${dist(j.warm?.startToListeningMs)}`],
    ["start() → the VAD's model ready: cold / warm", (j) => j.cold && `cold ${dist(j.cold.startToVadReadyMs)}; warm ${dist(j.warm?.startToVadReadyMs)}`],
    ["bytes before listening / before the model is ready (cold, p50)", (j) => j.cold && `${num(j.cold.bytesBeforeListening)} / ${num(j.cold.bytesBeforeVadReady)} B`],
    ["a question 300 ms after listening answered whole (cold / warm)", (j) => j.cold && `${pct(j.cold.earlyTurnAnswered)} / ${pct(j.warm?.earlyTurnAnswered)}`],
    ["wasm / model sent, compressed vs not", (j) => j.compression && `${num(j.compression.wasmBytes)} / ${num(j.compression.modelBytes)} B vs ${num(j.uncompressed?.compression?.wasmBytes)} / ${num(j.uncompressed?.compression?.modelBytes)} B`],
    ["uncompressed: cold start → model ready", (j) => j.uncompressed && dist(j.uncompressed.cold?.startToVadReadyMs)],
    ["goals met", (j) => j.goals && `${Object.values(j.goals).filter((g) => g.pass).length} of ${Object.keys(j.goals).length}`],
  ],
  fallback: [
    ["premature ends on the turn corpus: Silero / level fallback", (j) => j.turnTaking && `${pct(j.turnTaking.silero?.prematureEndRate)} / ${pct(j.turnTaking.levelFallback?.prematureEndRate)} of ${num(j.turnTaking.silero?.utterances)}`],
    ["voice to voice: Silero / level fallback", (j) => j.turnTaking && `${dist(j.turnTaking.silero?.voiceToVoiceMs)} / ${dist(j.turnTaking.levelFallback?.voiceToVoiceMs)}`],
    ["barge-in onset → silent: Silero / level fallback", (j) => j.bargeIn && `${dist(j.bargeIn.silero?.onsetToPauseMs)} / ${dist(j.bargeIn.levelFallback?.onsetToPauseMs)}`],
    ["stale samples: Silero / level fallback", (j) => j.bargeIn && `${num(j.bargeIn.silero?.staleSamples)} / ${num(j.bargeIn.levelFallback?.staleSamples)}`],
  ],
  controls: [
    ["start() → listening, cold / warm", (j) => j.startToListeningMs && `cold ${dist(j.startToListeningMs.cold)}; warm ${dist(j.startToListeningMs.warm)}`],
    ["unmute() → the VAD hears the mic", (j) => dist(j.unmuteToListeningMs)],
    ["audio lost across setInputDevice()", (j) => dist(j.inputSwapGapMs)],
    ["getLevels() main-thread cost (levels / with bins / off)", (j) => `${num(j.visualizerMainThreadMsPerSecond)} / ${num(j.visualizerWithBinsMainThreadMsPerSecond)} / ${num(j.visualizerOffMainThreadMsPerSecond)} ms per second`],
    ["goals met", (j) => j.goals && `${Object.values(j.goals).filter((g) => g.pass).length} of ${Object.keys(j.goals).length}`],
  ],
  echo: [
    ["no guard, −6 dB echo: self-interruptions", (j) => j.noGuard?.minus6dB && `${num(j.noGuard.minus6dB.selfInterruptions)} over ${num(j.noGuard.minus6dB.replies)} replies`],
    ["echo guard, −6 dB: self-interruptions", (j) => j.guard?.minus6dB && `${num(j.guard.minus6dB.selfInterruptions)} over ${num(j.guard.minus6dB.replies)} replies; user turns exact ${j.guard.minus6dB.userTurnsExact}`],
    ["echo guard, −6 dB: barge-ins confirmed", (j) => j.guard?.minus6dB && `${pct(j.guard.minus6dB.bargeInConfirmRate)} of ${num(j.guard.minus6dB.bargeIns)}; onset → silent ${dist(j.guard.minus6dB.onsetToSilentMs)}`],
    ["echo guard, −6 dB: ERLE p50", (j) => j.guard?.minus6dB?.erleDb && `${num(j.guard.minus6dB.erleDb.p50)} dB`],
    ["echo guard, RT60 0.8 s room: barge-ins confirmed", (j) => j.guard?.["minus6dB_rt60_0.8s"] && `${pct(j.guard["minus6dB_rt60_0.8s"].bargeInConfirmRate)} of ${num(j.guard["minus6dB_rt60_0.8s"].bargeIns)}; ERLE ${num(j.guard["minus6dB_rt60_0.8s"].erleDb?.p50)} dB (a known limit)`],
  ],
  noise: [
    // One row per setting of the curve (bench/noise.bench.mjs SETTINGS), then the default.
    ...[
      ["cueOn", "silence at the rise: the rule before #40"],
      ["cueOff", "Silero's speech start alone"],
      ["duckCue", "duck 12 dB, silence at p 0.15, release after 96 ms"],
      ["pauseQuickRelease", "silence at the rise, release after 96 ms"],
      ["duckHold", "duck 12 dB, silence at p 0.15, no quick release"],
      ["duckEagerSilence", "duck 12 dB, silence at p 0.08, release after 96 ms"],
      ["duckVoiced70", "as duckCue, and silence on a voiced frame (periodicity 0.7)"],
      ["duckFresh", "as duckCue, and Silero's state reset at each cue"],
    ].flatMap(([name, what]) => {
      const of = (j) => j.curve?.find((x) => x.variant === name);
      return [
        [
          `${name} (${what}): room sounds, per event`,
          (j) => of(j) && `${num(of(j).pausesPerNoiseEvent)} audible pauses, silenced p95 ${ms(of(j).silencedMsP95)}; ${num(of(j).dipsPerNoiseEvent)} dips, p95 ${ms(of(j).dippedMsP95)}; ${num(of(j).falseInterruptions)} false interruptions; goal ${of(j).goalsMet.noise ? "met" : "not met"}`,
        ],
        [
          `${name}: real voices`,
          (j) => of(j) && `onset → silent ${dist(of(j).onsetToSilentMs)}; → ducked ${dist(of(j).onsetToDuckedMs)}; confirmed ${pct(of(j).confirmRate)}; goal ${of(j).goalsMet.speech ? "met" : "not met"}`,
        ],
      ];
    }),
    ["the default", (j) => j.default && `${j.default.options}${j.default.sameAs ? ` (= ${j.default.sameAs})` : ""}; goals met: noise ${j.goals?.met?.default?.noise ? "yes" : "no"}, speech ${j.goals?.met?.default?.speech ? "yes" : "no"}`],
  ],
  providers: [
    ...["kyutai", "deepgram", "assemblyai", "elevenlabs", "cartesia"].map((name) => [
      `${name} (${name === "kyutai" ? "the baseline pair" : "with the Kyutai counterpart"})`,
      (j) => j[name] && `${num(j[name].bargeIns)} barge-ins; heard-word error mean ${num(j[name].heardWordError?.mean)}; stale samples ${num(j[name].staleSamples)}; first byte → audible ${dist(j[name].firstAudioByteToAudibleMs)}`,
    ]),
  ],
  realtime: [
    ...["openai", "gemini"].flatMap((svc) =>
      ["bargein", "peer"].map((who) => [
        `${svc === "openai" ? "OpenAI Realtime" : "Gemini Live"} emulator: ${who === "bargein" ? "bargein" : "the service's own client"}`,
        (j) => {
          const r = j[svc]?.[who];
          if (!r) return undefined;
          const trunc = r.truncateErrorMs ? `; truncate error mean ${num(r.truncateErrorMs.mean)} ms` : "";
          const judged = r.planned === undefined ? `${num(r.trials)} trials` : `${num(r.judged)} of ${num(r.planned)} judged (inaudible ${num(r.notBargeIns)})`;
          const stale = r.staleAudioTrials === undefined ? "" : `, stale audio in ${num(r.staleAudioTrials)} (${num(r.staleAudioMs?.total)} ms)`;
          return `${judged}, onset → silent ${dist(r.onsetToSilentMs)}${trunc}; misaligned ${num(r.misaligned)}, not stopped ${num(r.notStopped)}${stale}`;
        },
      ]),
    ),
  ],
  reliability: [
    ["soak: barge-ins at random moments", (j) => `${num(j.bargeIns)} (${num(j.bargeInAttempts)} attempts, ${num(Math.round((j.soakSeconds ?? 0) / 60))} min); stale samples ${num(j.staleSamples)}`],
    ["leaks after the soak", (j) => `sockets ${num(j.leakedSockets)}, quests ${num(j.leakedQuests)}, uncaught ${num(j.uncaughtErrors)}, session errors ${num(j.sessionErrors)}, heap ${num(Math.round((j.heapDeltaBytes ?? 0) / 1000))} kB`],
    ["fault cases", (j) => `${num(j.faultCases)} run, ${num(j.failedFaultCases)} failed, transcripts lost ${num(j.transcriptLost)}`],
    ["fuzzed provider messages", (j) => `${num(j.fuzzMessages)}, uncaught ${num(j.fuzzUncaught)}`],
  ],
  turn: [
    ["voice to voice on loopback (8 turns, the defaults)", (j) => dist(j.voiceToVoiceMs) && `${dist(j.voiceToVoiceMs)}; truth ${dist(j.voiceToVoiceTruthMs)}`],
    ["of which the VAD's wait for silence", (j) => dist(j.voiceEndToDecisionMs)],
    ["first TTS byte → audible", (j) => dist(j.firstAudioByteToAudibleMs)],
    ...[
      ["baseline", "end of turn: VAD 600 ms alone"],
      ["policyNoResume", "end of turn: 300 ms + hold unfinished"],
      ["policy", "end of turn: the default (300 ms + hold + resumed turns)"],
      ["policyShort", "end of turn: 200 ms + hold + resumed turns"],
      ["preemptive", "end of turn: the default + preemptive reply"],
    ].map(([key, label]) => [
      label,
      (j) => j[key] && `voice to voice ${dist(j[key].voiceToVoiceMs)}; premature ends ${pct(j[key].prematureEndRate)}; LLM requests never heard ${num(j[key].wastedLlmRequestsPerTurn)} a turn`,
    ]),
    ["backchannels that interrupted (policy / any word)", (j) => j.backchannel && `${pct(j.backchannel.policy?.backchannelInterruptRate)} / ${pct(j.backchannel.anyWord?.backchannelInterruptRate)} of ${num(j.backchannel.policy?.backchannels)}`],
    ["real interruptions confirmed (policy / any word)", (j) => j.backchannel && `${pct(j.backchannel.policy?.realInterruptConfirmRate)} / ${pct(j.backchannel.anyWord?.realInterruptConfirmRate)} of ${num(j.backchannel.policy?.realInterruptions)}`],
  ],
  uplink: [
    ...["1", "10", "50"].map((n) => [
      `${n} stream${n === "1" ? "" : "s"} on a slow link: bargein / naive sender`,
      (j) => j.streams?.[n] && `pending bytes max ${num(j.streams[n].pendingBytesMax)} / ${num(j.naive?.[n]?.pendingBytesMax)} (budget ${num(j.budgetBytes)}); oldest frame ${ms(j.streams[n].oldestFrameAgeMsMax)} / ${ms(j.naive?.[n]?.oldestFrameAgeMsMax)}`,
    ]),
    ["samples dropped silently", (j) => j.streams && Object.values(j.streams).map((s) => num(s.silentlyDroppedSamples)).join(", ")],
  ],
  vad: [
    ["main-thread time per audio second: bargein / vad-web MicVAD", (j) => j.mainThreadMsPerAudioSecond && `${num(j.mainThreadMsPerAudioSecond.ours)} / ${num(j.mainThreadMsPerAudioSecond.micvad)} ms`],
    ["speech-start latency: bargein / MicVAD", (j) => j.onsetLatencyMs && `${dist(j.onsetLatencyMs.ours)}; ${dist(j.onsetLatencyMs.micvad)}`],
    ["Silero inference per 32 ms frame (worker)", (j) => dist(j.inferenceMs)],
    ["load time: bargein / MicVAD", (j) => j.loadMs && `${ms(j.loadMs.ours)} / ${ms(j.loadMs.micvad)}`],
  ],
  "vad-models": [
    ...["v5", "v6", "legacy"].map((m) => [
      `Silero ${m}: noisy utterances found; onset error at 0 dB SNR`,
      (j) => j[m] && `${num(j[m].noisy?.found)} of ${num((j[m].noisy?.found ?? 0) + (j[m].noisy?.missed ?? 0))}, ${num(j[m].noiseOnlyInvented)} invented; ${dist(j[m].at0dB?.onsetErrorMs)}`,
    ]),
  ],
};

/** The top-level numbers of a file with no curated headlines. */
function genericRows(json) {
  const rows = [];
  const walk = (o, path, depth) => {
    if (rows.length >= 12 || depth > 2 || o == null || typeof o !== "object" || Array.isArray(o)) return;
    const d = dist(o);
    if (d && path) return void rows.push([path, d]);
    for (const [k, v] of Object.entries(o)) {
      if (k === "machine" || k === "measuredAt") continue;
      const p = path ? `${path}.${k}` : k;
      if (typeof v === "number" || typeof v === "boolean") rows.push([p, num(v)]);
      else walk(v, p, depth + 1);
      if (rows.length >= 12) return;
    }
  };
  walk(json, "", 0);
  return rows;
}

// ---- the document -----------------------------------------------------------

function when(json) {
  const at = json.measuredAt ?? json.date;
  if (!at) return "not recorded";
  const d = new Date(at);
  return Number.isNaN(d.getTime()) ? String(at) : `${d.toISOString().slice(0, 16).replace("T", " ")} UTC`;
}

function machine(json) {
  const m = json.machine;
  if (!m || typeof m !== "object") return "not recorded";
  const parts = Object.entries(m).map(([k, v]) => (k === "node" ? `Node ${v}` : String(v)));
  const missing = ["cpus", "cores", "cpu"].some((k) => k in m) ? "" : "; CPU, load and browser version not recorded";
  return `${parts.join(", ")}${missing}`;
}

const files = readdirSync(resultsDir).filter((f) => f.endsWith(".json")).sort();
const lines = [
  "# Benchmarks",
  "",
  "<!-- Generated by scripts/benchmarks-doc.mjs from bench/results/*.json (npm run docs:benchmarks). Do not edit by hand. -->",
  "",
  "Each bench writes `bench/results/NAME.json` (`npm run bench -- NAME`; `npm run bench` runs them all). This page",
  "lists each file's headline figures as recorded, on the machine the bench ran on. Figures depend on that machine",
  "and its load: compare rows of one run, not figures across machines. The emulated services are the reference",
  "backend's, built from the services' public docs, not the services. Each JSON holds its method and per-trial data.",
  "",
];
for (const file of files) {
  const name = file.replace(/\.json$/, "");
  let json;
  try {
    json = JSON.parse(readFileSync(new URL(file, resultsDir), "utf8"));
  } catch (err) {
    lines.push(`## ${name}`, "", `\`bench/results/${file}\` could not be read: ${err.message}`, "");
    continue;
  }
  const [bench] = name.split(".");
  const curated = HEADLINES[bench];
  const rows = curated
    ? curated.flatMap(([what, get]) => {
        let value;
        try {
          value = get(json);
        } catch {
          value = undefined;
        }
        return value === undefined ? [] : [[what, value]];
      })
    : genericRows(json);
  lines.push(`## ${name}`, "");
  lines.push(`- File: \`bench/results/${file}\` (\`npm run bench -- ${bench}\`)`);
  lines.push(`- Date: ${when(json)}`);
  lines.push(`- Machine: ${machine(json)}`);
  if (json.provider) lines.push(`- Provider: ${json.provider}`);
  lines.push("");
  if (rows.length === 0) {
    lines.push("No headline figures found in this file.", "");
    continue;
  }
  lines.push("| what | result |", "| --- | --- |");
  for (const [what, value] of rows) lines.push(`| ${cell(what)} | ${cell(value)} |`);
  lines.push("");
}
writeFileSync(out, lines.join("\n"));
console.log(`wrote docs/benchmarks.md (${files.length} results files)`);
