// The recogniser's system packages: how to install them, and doing so when we can.
import { spawnSync } from "node:child_process";
import { SPEECH_PACKAGES } from "./pocketsphinx.mjs";

export function installCommand() {
  return `sudo apt-get install -y ${SPEECH_PACKAGES.join(" ")}`;
}

/**
 * Installs the pocketsphinx packages with apt-get when running as root on a
 * Debian-like system. Returns true when it ran apt-get successfully.
 */
export function tryInstallSpeechPackages() {
  if (process.getuid?.() !== 0) return false;
  if (spawnSync("sh", ["-c", "command -v apt-get"], { stdio: "ignore" }).status !== 0) return false;
  console.log(`installing ${SPEECH_PACKAGES.join(", ")} with apt-get…`);
  const update = spawnSync("apt-get", ["update"], { stdio: "inherit" });
  if (update.status !== 0) return false;
  const result = spawnSync("apt-get", ["install", "-y", ...SPEECH_PACKAGES], {
    stdio: "inherit",
    env: { ...process.env, DEBIAN_FRONTEND: "noninteractive" },
  });
  return result.status === 0;
}
