// The doc-drift check (`npm test`'s "docs" step, after `npm run docs`): the options as the types
// declare them (TypeDoc's JSON of the public entries, .cache/reference/api.json) against
//   (a) their doc comments: every public option has one, and a `@defaultValue` that is a plain
//       literal (700, true, "vad", [0, 300]) equals its entry in src/defaults.ts' DEFAULTS;
//   (b) the prose: an option path in a code span of README.md or docs/**/*.md (`turn.flushTimeoutMs`,
//       `vad.onsetPause`: dotted, first segment a top-level VoiceSessionOptions key) must exist.
// It reports every finding and exits 1 on any; it never guesses what a finding should have been.
import { spawnSync } from "node:child_process";
import { readFileSync, readdirSync, statSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";

const root = fileURLToPath(new URL("..", import.meta.url));
const api = JSON.parse(readFileSync(`${root}.cache/reference/api.json`, "utf8"));
const DEFAULTS = await loadDefaults();

const KIND = { interface: 256, property: 1024, typeLiteral: 65536, typeAlias: 2097152, class: 128 };

/**
 * Option types used on their own (a class's or a factory's options), and the DEFAULTS group their
 * `@defaultValue`s are checked against. VoiceSessionOptions' groups are its option paths.
 */
const STANDALONE = {
  // VoiceSessionOptions with more: its paths, its groups.
  UseVoiceSessionOptions: "",
  FakeSessionOptions: "",
  VadWorkerOptions: "vadWorker",
  MicrophoneOptions: "microphone",
  MicrophoneUplinkOptions: "microphone.uplink",
  PlayerOptions: "player",
  UplinkOptions: "uplink",
  AdmissionOptions: "llmAdmission",
  BackoffPolicyOptions: "reconnect",
  ToolOptions: "tools",
  KyutaiServiceOptions: "providers.kyutaiStt",
  KyutaiSttOptions: "providers.kyutaiStt",
  KyutaiTtsOptions: "providers.kyutaiTts",
  DeepgramSttOptions: "providers.deepgramStt",
  AssemblyaiSttOptions: "providers.assemblyaiStt",
  ElevenlabsTtsOptions: "providers.elevenlabsTts",
  CartesiaTtsOptions: "providers.cartesiaTts",
  OpenaiChatOptions: "providers.openaiChat",
  WebsocketLlmOptions: "providers.websocketLlm",
  OpenaiRealtimeOptions: "providers.openaiRealtime",
  GeminiLiveOptions: "providers.geminiLive",
};
/** VoiceSessionOptions' own switches live in DEFAULTS.session. */
const SESSION_KEYS = { meter: "session.meter", releaseMicOnHide: "session.releaseMicOnHide" };

const byId = new Map();
(function index(node) {
  if (node && typeof node === "object") {
    if (typeof node.id === "number" && node.variant === "declaration") byId.set(node.id, node);
    for (const v of Object.values(node)) if (v && typeof v === "object") index(v);
  }
})(api);
const exported = api.children.flatMap((m) => m.children ?? []);
const findings = [];
/** Option types reached from VoiceSessionOptions: checked there, by their option path. */
const reached = new Set();
let checkedOptions = 0;
let checkedDefaults = 0;

// (a) every option documented, every literal default the one in DEFAULTS.
const session = exported.find((d) => d.name === "VoiceSessionOptions");
if (!session) findings.push("VoiceSessionOptions is not in the reference");
else walkOptions(session, "VoiceSessionOptions", "", new Set());
for (const decl of exported) {
  if (!/Options$/.test(decl.name) || decl.name === "VoiceSessionOptions" || reached.has(decl.id)) continue;
  walkOptions(decl, decl.name, STANDALONE[decl.name] ?? null, new Set(), true);
}

// (b) option paths in the prose.
const prose = ["README.md", ...markdownUnder("docs").filter((f) => !f.startsWith("docs/reference/"))];
// Only the keys that hold option objects (`turn`, `vad`, …): `stt`, `llm`, `reconnect` are providers and
// policies, and `llm.requests` in a testing guide is a fake's property, not an option path.
const sessionKeys = new Set(members(session).filter((m) => nestedOptionTypes(m.type).length > 0).map((m) => m.name));
const FILE_NAME = /\.(m?[jt]sx?|json|md|html|onnx|wasm)$/;
let checkedPaths = 0;
for (const file of prose) {
  const text = readFileSync(`${root}${file}`, "utf8");
  const seen = new Set();
  for (const [, span] of text.matchAll(/`([^`\n]+)`/g)) {
    const path = span.trim();
    if (!/^[A-Za-z_]\w*(\.[A-Za-z_]\w*)+$/.test(path) || seen.has(path)) continue;
    if (!sessionKeys.has(path.split(".")[0]) || FILE_NAME.test(path)) continue;
    seen.add(path);
    checkedPaths++;
    if (!pathExists(session, path.split("."))) findings.push(`${file}: \`${path}\` is not an option (VoiceSessionOptions has no such path)`);
  }
}

// (c) The committed reference is the one the types make (npm run docs has just written it): a change to
// the types that was not followed by `npm run docs` shows here, in a clean clone as in CI.
const stale = spawnSync("git", ["status", "--porcelain", "--", "docs/reference"], { cwd: root, encoding: "utf8" });
if (stale.status === 0 && stale.stdout.trim()) {
  const files = stale.stdout.split("\n").filter(Boolean);
  findings.push(`docs/reference differs from the types in ${files.length} file(s) (${files.slice(0, 3).map((l) => l.slice(3)).join(", ")}${files.length > 3 ? ", …" : ""}): run \`npm run docs\` and commit docs/reference`);
}

for (const f of findings) console.error(`doc-drift: ${f}`);
console.log(`doc-drift: ${checkedOptions} options documented-checked, ${checkedDefaults} @defaultValue checked against DEFAULTS, ${checkedPaths} option paths in ${prose.length} Markdown files; ${findings.length} finding(s)`);
process.exit(findings.length ? 1 : 0);

/**
 * Checks each member of an option type: a doc comment, and its literal @defaultValue against
 * DEFAULTS at `group` + its name (group null: no DEFAULTS group, so a literal default is a finding).
 * Nested option objects (inline, or an `…Options` type, alone or in a union) are walked too.
 */
function walkOptions(decl, label, group, visiting, standalone = false) {
  if (visiting.has(decl.id)) return;
  visiting.add(decl.id);
  if (!standalone) reached.add(decl.id);
  for (const m of members(decl)) {
    if (m.flags?.isExternal) continue;
    checkedOptions++;
    const where = `${label}.${m.name}`;
    if (!hasDoc(m)) findings.push(`${where} has no doc comment`);
    const key = group === null ? null : group === "" && SESSION_KEYS[m.name] ? SESSION_KEYS[m.name] : group === "" ? m.name : `${group}.${m.name}`;
    checkDefault(m, where, key);
    for (const nested of nestedOptionTypes(m.type)) {
      // A type used on its own is checked there, with its own group; here only its path matters.
      if (standalone && nested.name && /Options$/.test(nested.name) && exported.includes(nested)) continue;
      walkOptions(nested, nested.name && nested.name !== "__type" ? `${where}` : where, key, visiting, standalone);
    }
  }
  visiting.delete(decl.id);
}

function checkDefault(m, where, key) {
  const tag = (m.comment?.blockTags ?? []).find((t) => t.tag === "@defaultValue" || t.tag === "@default");
  if (!tag) return;
  const raw = tag.content.map((c) => c.text).join("").trim().replace(/^```\w*\n?|```$/g, "").replace(/^`|`$/g, "").trim();
  const literal = parseLiteral(raw);
  if (literal === undefined) return; // prose ("the STT's rate"): nothing to compare
  checkedDefaults++;
  if (key === null) return void findings.push(`${where}: @defaultValue ${raw} but its type has no DEFAULTS group (scripts/doc-drift.mjs STANDALONE)`);
  let value = at(DEFAULTS, key);
  if (value && typeof value === "object" && !Array.isArray(value) && "enabled" in value) value = value.enabled;
  if (value === undefined) return void findings.push(`${where}: @defaultValue ${raw} but DEFAULTS.${key} does not exist`);
  if (JSON.stringify(value) !== JSON.stringify(literal.value)) findings.push(`${where}: @defaultValue ${raw} but DEFAULTS.${key} is ${JSON.stringify(value)}`);
}

/** A JSON-like literal (numbers may have _ separators; strings in either quotes), or undefined for prose. */
function parseLiteral(text) {
  const t = text.replace(/(\d)_(?=\d)/g, "$1").replace(/'([^']*)'/g, '"$1"');
  try {
    return { value: JSON.parse(t) };
  } catch {
    return undefined;
  }
}

function hasDoc(m) {
  const summary = (m.comment?.summary ?? []).map((c) => c.text).join("").trim();
  return summary.length > 0 || (m.comment?.blockTags ?? []).some((t) => t.tag === "@deprecated");
}

/** The object types an option's value may be (inline objects and `…Options` types), to walk into. */
function nestedOptionTypes(type) {
  if (!type) return [];
  if (type.type === "union" || type.type === "intersection") return type.types.flatMap(nestedOptionTypes);
  if (type.type === "reflection" && type.declaration?.children) return [type.declaration];
  if (type.type === "reference" && typeof type.target === "number") {
    const d = byId.get(type.target);
    if (d && /Options$/.test(d.name) && (d.kind === KIND.interface || d.kind === KIND.typeAlias)) return d.children ? [d] : nestedOptionTypes(d.type);
  }
  return [];
}

/** A declaration's members, inherited ones included (TypeDoc lists them on the interface). */
function members(decl) {
  if (!decl) return [];
  if (decl.children) return decl.children.filter((c) => c.kind === KIND.property);
  if (decl.type?.type === "reflection") return members(decl.type.declaration);
  return [];
}

/** True when `segments` name a member path of `decl`; a value whose type is outside bargein's types ends the check. */
function pathExists(decl, segments) {
  if (segments.length === 0) return true;
  const [first, ...rest] = segments;
  const m = members(decl).find((c) => c.name === first);
  if (!m) return false;
  return rest.length === 0 || typeAllows(m.type, rest);
}

function typeAllows(type, segments) {
  if (!type) return true;
  switch (type.type) {
    case "union":
    case "intersection":
      return type.types.some((t) => typeAllows(t, segments));
    case "array":
      return typeAllows(type.elementType, segments);
    case "reflection":
      return type.declaration?.children ? pathExists(type.declaration, segments) : true;
    case "reference": {
      const d = typeof type.target === "number" ? byId.get(type.target) : undefined;
      if (!d) return true; // a DOM or library type: not bargein's to check
      if (d.children) return pathExists(d, segments);
      return d.type ? typeAllows(d.type, segments) : true;
    }
    case "intrinsic":
    case "literal":
      return false;
    default:
      return true;
  }
}

function at(object, dotted) {
  return dotted.split(".").reduce((o, k) => (o && typeof o === "object" ? o[k] : undefined), object);
}

function markdownUnder(dir) {
  let out = [];
  let names;
  try {
    names = readdirSync(`${root}${dir}`);
  } catch {
    return out;
  }
  for (const name of names) {
    const rel = `${dir}/${name}`;
    if (statSync(`${root}${rel}`).isDirectory()) out = out.concat(markdownUnder(rel));
    else if (name.endsWith(".md")) out.push(rel);
  }
  return out;
}

/** src/defaults.ts as it is in the source (not a build that may be stale), through esbuild. */
async function loadDefaults() {
  const out = await build({ entryPoints: [`${root}src/defaults.ts`], bundle: true, write: false, format: "esm", platform: "neutral", logLevel: "silent" });
  const module = await import(`data:text/javascript;base64,${Buffer.from(out.outputFiles[0].text).toString("base64")}`);
  return module.DEFAULTS;
}
