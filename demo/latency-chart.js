// The developer panel's latency chart: one row per finished turn, a mark per
// stage, from the user's real end of speech (the VAD's last speech frame).
// Each row's label sits in a column of its own at the right, so it never
// covers a mark.
const SVG_NS = "http://www.w3.org/2000/svg";

/** The turn-end decision comes voiceEndToDecisionMs after the voice ends; the other stages are measured from that decision. */
const STAGES = [
  ["voiceEndToDecisionMs", "turn end decided", "#9aa0ab"],
  ["speechEndToSttFinalMs", "STT final", "#3f9a64"],
  ["speechEndToFirstTokenMs", "first token", "#7b68c8"],
  ["speechEndToFirstAudioByteMs", "first audio byte", "#3f6fd1"],
  ["speechEndToFirstAudibleMs", "audible", "#d08a1c"],
];
const ROW_H = 24;
const LEFT = 64; // the "turn n" column
const LABEL_W = 150; // the latency label's column

function svg(tag, attrs, text) {
  const el = document.createElementNS(SVG_NS, tag);
  for (const [k, v] of Object.entries(attrs)) el.setAttribute(k, String(v));
  if (text !== undefined) el.textContent = text;
  return el;
}

const offset = (turn, key) => (key === "voiceEndToDecisionMs" ? 0 : turn.voiceEndToDecisionMs ?? 0);

/** Draws the last 8 of `turns` (TurnMetrics) into `el`, an <svg>. */
export function drawLatencyChart(el, turns) {
  const shown = turns.slice(-8);
  const maxMs = Math.max(500, ...shown.flatMap((t) => STAGES.map(([k]) => (t[k] ?? 0) + offset(t, k))));
  const width = el.clientWidth || 520; // 0 while the panel is closed: it is drawn again when opened
  const plotRight = width - LABEL_W - 8;
  const x = (ms) => LEFT + (ms / maxMs) * (plotRight - LEFT);
  el.setAttribute("height", String(shown.length * ROW_H + 30));
  el.replaceChildren();
  shown.forEach((turn, i) => {
    const y = i * ROW_H + 4;
    el.append(svg("rect", { x: LEFT, y: y + ROW_H / 2 - 3, width: plotRight - LEFT, height: 2, fill: "#e6e8ee" }));
    el.append(svg("text", { x: 0, y: y + 14 }, `turn ${turn.turn}${turn.interrupted ? " ✂" : ""}`));
    for (const [key, name, color] of STAGES) {
      if (turn[key] === undefined) continue;
      const ms = turn[key] + offset(turn, key);
      const mark = svg("rect", { x: x(ms) - 2, y, width: 4, height: ROW_H - 6, rx: 1, fill: color });
      mark.append(svg("title", {}, `${name}: ${Math.round(ms)} ms`));
      el.append(mark);
    }
    // The label is what the user felt, voice to voice, where it is known (not for a typed turn).
    const audible = turn.voiceToVoiceMs ?? turn.speechEndToFirstAudibleMs;
    if (audible !== undefined) {
      const text = svg("text", { x: width - LABEL_W, y: y + 14 }, turn.voiceToVoiceMs !== undefined ? `${Math.round(audible)} ms voice to voice` : `${Math.round(audible)} ms`);
      text.dataset.testid = "turn-latency";
      el.append(text);
    }
  });
  // The legend: each stage's colour and name, left to right in the order they happen.
  let lx = LEFT;
  const ly = shown.length * ROW_H + 18;
  for (const [, name, color] of STAGES) {
    el.append(svg("rect", { x: lx, y: ly - 9, width: 8, height: 10, rx: 1, fill: color }));
    el.append(svg("text", { x: lx + 12, y: ly, class: "legend" }, name));
    lx += 12 + name.length * 6 + 14;
  }
}
