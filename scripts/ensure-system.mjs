// Makes sure the Debian packages the tests and the demo need are present:
// Chromium for the browser suite (Playwright cannot download browsers here),
// pocketsphinx with its English model for the reference STT, and with --engines
// the other engines' set (test/engines): Firefox ESR, WebKitGTK's driver and
// MiniBrowser under Xvfb with GStreamer's plugins, and PulseAudio for their
// audio devices (without its recommends, which would pull a desktop session in).
// As root it installs what is missing with apt-get; otherwise it fails with the
// exact command to run. A browser suite never skips for want of a browser.
//
//   node scripts/ensure-system.mjs            everything the tests need
//   node scripts/ensure-system.mjs --demo     only what the demo needs (no browser)
//   node scripts/ensure-system.mjs --bench    everything, and the benches' recordings of real people
//   node scripts/ensure-system.mjs --engines  everything, and the other engines' (npm run test:engines runs it)
import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";
import { CHROMIUM_PATH } from "./chromium.mjs";

const PACKAGES = [
  { pkg: "chromium", file: CHROMIUM_PATH, forDemo: false, custom: !!process.env.CHROMIUM_PATH },
  { pkg: "libpocketsphinx3", file: "/usr/lib/x86_64-linux-gnu/libpocketsphinx.so.3", alt: "libpocketsphinx.so.3", forDemo: true },
  { pkg: "pocketsphinx-en-us", file: "/usr/share/pocketsphinx/model/en-us", forDemo: true },
  // The engines' set (test/engines/README.md).
  { pkg: "firefox-esr", file: "/usr/bin/firefox-esr", forEngines: true },
  { pkg: "webkit2gtk-driver", file: "/usr/bin/WebKitWebDriver", forEngines: true },
  { pkg: "xvfb", file: "/usr/bin/Xvfb", forEngines: true },
  { pkg: "xauth", file: "/usr/bin/xauth", forEngines: true },
  { pkg: "gstreamer1.0-plugins-base", dpkg: true, forEngines: true },
  { pkg: "gstreamer1.0-plugins-good", dpkg: true, forEngines: true },
  { pkg: "gstreamer1.0-plugins-bad", dpkg: true, forEngines: true },
  { pkg: "gstreamer1.0-libav", dpkg: true, forEngines: true },
  { pkg: "pulseaudio", file: "/usr/bin/pulseaudio", noRecommends: true, forEngines: true },
  { pkg: "pulseaudio-utils", file: "/usr/bin/paplay", noRecommends: true, forEngines: true },
  // LibriVox and CMU recordings: the barge-in bench's real voices (bench/lib/human-speech.mjs).
  { pkg: "pocketsphinx-testdata", file: "/usr/share/pocketsphinx/test/data/librivox", forBench: true },
];

const demoOnly = process.argv.includes("--demo");
const forBench = process.argv.includes("--bench");
const forEngines = process.argv.includes("--engines");
const wanted = PACKAGES.filter((p) => (demoOnly ? p.forDemo : (!p.forBench || forBench) && (!p.forEngines || forEngines)));
const missing = () => wanted.filter((p) => !present(p));

function present(p) {
  if (p.dpkg) {
    try {
      return execFileSync("dpkg-query", ["-W", "-f=${Status}", p.pkg], { encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] }).includes("install ok installed");
    } catch {
      return false;
    }
  }
  if (existsSync(p.file)) return true;
  if (!p.alt) return false;
  try {
    return execFileSync("ldconfig", ["-p"], { encoding: "utf8" }).includes(p.alt);
  } catch {
    return false;
  }
}

let todo = missing();
if (todo.length === 0) process.exit(0);

const isRoot = typeof process.getuid === "function" && process.getuid() === 0;
const installable = todo.filter((p) => !p.custom).map((p) => p.pkg);
if (isRoot && installable.length) {
  console.log(`Installing missing Debian packages: ${installable.join(" ")} …`);
  const env = { ...process.env, DEBIAN_FRONTEND: "noninteractive" };
  try {
    execFileSync("apt-get", ["update", "-qq"], { stdio: "inherit", env });
    const plain = todo.filter((p) => !p.custom && !p.noRecommends).map((p) => p.pkg);
    const bare = todo.filter((p) => !p.custom && p.noRecommends).map((p) => p.pkg);
    if (plain.length) execFileSync("apt-get", ["install", "-y", "-qq", ...plain], { stdio: "inherit", env });
    if (bare.length) execFileSync("apt-get", ["install", "-y", "-qq", "--no-install-recommends", ...bare], { stdio: "inherit", env });
  } catch (err) {
    console.error(`apt-get failed: ${err.message}`);
  }
  todo = missing();
}
if (todo.length === 0) process.exit(0);

const left = todo.filter((p) => !p.custom);
const installs = [
  ["", left.filter((p) => !p.noRecommends)],
  ["--no-install-recommends ", left.filter((p) => p.noRecommends)],
]
  .filter(([, pkgs]) => pkgs.length)
  .map(([flag, pkgs]) => `sudo apt-get install -y ${flag}${pkgs.map((p) => p.pkg).join(" ")}`);
console.error(
  `Missing: ${todo.map((p) => (p.file ? `${p.pkg} (${p.file})` : p.pkg)).join(", ")}.\n` +
    (installs.length ? `Install with:  sudo apt-get update && ${installs.join(" && ")}\n` : "") +
    (todo.some((p) => p.custom) ? `CHROMIUM_PATH points at ${CHROMIUM_PATH}, which does not exist.\n` : ""),
);
process.exit(1);
