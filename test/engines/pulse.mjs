// PulseAudio for a browser engine that has no sound device here: a null sink as the speakers and
// a second null sink whose monitor, remapped, is the default microphone (WebKit lists no monitor
// sources; a remapped one works). `play(wav)` speaks a file into that microphone.
// Started per run in a folder of its own; stop() kills only the processes this module started.
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync, existsSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { track } from "../../bench/lib/cleanup.mjs";

const START_TIMEOUT_MS = 10_000;

/**
 * @returns {Promise<{ env: Record<string, string>, play: (wav: string) => Promise<void>, stop: () => Promise<void> }>}
 *   `env`: what a browser needs to reach this server (PULSE_SERVER, and a HOME of its own).
 */
export async function startPulse() {
  const dir = mkdtempSync(join(tmpdir(), "bargein-pulse-"));
  const socket = join(dir, "native");
  const config = join(dir, "default.pa");
  writeFileSync(
    config,
    [
      `load-module module-native-protocol-unix auth-anonymous=1 socket=${socket}`,
      "load-module module-null-sink sink_name=speakers",
      "load-module module-null-sink sink_name=micsink",
      "load-module module-remap-source master=micsink.monitor source_name=virtmic",
      "set-default-sink speakers",
      "set-default-source virtmic",
      "",
    ].join("\n"),
  );
  const env = { HOME: dir, XDG_RUNTIME_DIR: dir, PULSE_SERVER: `unix:${socket}` };
  const child = spawn("pulseaudio", ["-n", "-F", config, "--exit-idle-time=-1", "--daemonize=no", "--use-pid-file=no"], {
    env: { ...process.env, ...env },
    stdio: ["ignore", "ignore", "pipe"],
  });
  let stderr = "";
  child.stderr.on("data", (c) => (stderr = (stderr + c).slice(-4000)));
  const players = new Set();
  const exited = new Promise((resolve) => child.once("exit", resolve));
  const stop = async () => {
    untrack();
    for (const p of players) p.kill("SIGKILL");
    if (child.exitCode === null) child.kill("SIGTERM");
    await Promise.race([exited, new Promise((r) => setTimeout(r, 3000))]);
    if (child.exitCode === null) child.kill("SIGKILL");
    rmSync(dir, { recursive: true, force: true });
  };
  const untrack = track({ name: `pulseaudio (pid ${child.pid})`, stop, killNow: () => child.kill("SIGKILL") });
  const end = Date.now() + START_TIMEOUT_MS;
  while (!existsSync(socket)) {
    if (child.exitCode !== null || Date.now() > end) {
      await stop();
      throw new Error(`pulseaudio did not start (is the Debian package pulseaudio installed?): ${stderr.trim().split("\n").slice(-3).join(" | ")}`);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  /** Plays a WAV file into the microphone and resolves when it has been played. */
  const play = (wav) =>
    new Promise((resolve, reject) => {
      const p = spawn("paplay", ["--device=micsink", wav], { env: { ...process.env, ...env }, stdio: "ignore" });
      players.add(p);
      p.once("error", reject);
      p.once("exit", (code) => {
        players.delete(p);
        code === 0 ? resolve(undefined) : reject(new Error(`paplay ${wav} exited with ${code}`));
      });
    });
  return { env, play, stop };
}
