// Makes sure the browser suite has a Chromium to drive. Playwright cannot
// download browsers here, so we use Debian's. A browser suite never skips:
// if Chromium is missing and cannot be installed, this fails with the command to run.
import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";

const path = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";
if (existsSync(path)) process.exit(0);

const isRoot = typeof process.getuid === "function" && process.getuid() === 0;
if (isRoot && !process.env.CHROMIUM_PATH) {
  console.log("Chromium is missing; installing Debian's chromium with apt-get …");
  try {
    execFileSync("apt-get", ["update"], { stdio: "inherit" });
    execFileSync("apt-get", ["install", "-y", "chromium"], {
      stdio: "inherit",
      env: { ...process.env, DEBIAN_FRONTEND: "noninteractive" },
    });
  } catch (err) {
    console.error(`Installing Chromium failed: ${err.message}`);
  }
  if (existsSync(path)) process.exit(0);
}
console.error(
  `Chromium was not found at ${path}. The browser tests need it and never skip.\n` +
    `Install it with:  sudo apt-get update && sudo apt-get install -y chromium\n` +
    `or point CHROMIUM_PATH at a Chromium binary.`,
);
process.exit(1);
