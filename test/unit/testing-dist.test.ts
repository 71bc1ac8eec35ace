/**
 * The built package runs the scripted conversation too: plain Node (no vitest
 * transform) imports "bargein" and "bargein/testing" by name, through
 * package.json's exports, and the fakes use the main bundle's classes rather
 * than a copy of their own. Needs `npm run build` (npm test builds first).
 */
import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { expect, test } from "vitest";

const root = fileURLToPath(new URL("../../", import.meta.url));
const built = existsSync(`${root}dist/testing.js`) && existsSync(`${root}dist/bargein.js`);

test.skipIf(!built)("dist/testing.js and dist/bargein.js run a scripted conversation in plain Node, sharing one VoiceSession class and one error family", async () => {
  const script = fileURLToPath(new URL("./testing-dist-conversation.mjs", import.meta.url));
  const { stdout } = await promisify(execFile)(process.execPath, [script], { cwd: root, timeout: 20_000 });
  const seen = JSON.parse(stdout.trim().split("\n").at(-1)!);
  expect(seen.states).toEqual(["connecting", "listening", "user_speaking", "bot_thinking", "bot_speaking", "user_speaking", "bot_thinking", "bot_speaking", "listening", "idle"]);
  expect(seen.finals).toContain("user: can you help me");
  expect(seen.interruptions).toEqual([{ reason: "speech", heardText: "Sure, I can help.", unheardText: "What do you need?" }]);
  expect(seen.history).toEqual([
    { id: "u1", role: "user", text: "can you help me" },
    { id: "a2", role: "assistant", text: "Sure, I can help.", interrupted: true, unheardText: "What do you need?" },
    { id: "u3", role: "user", text: "wait a moment" },
    { id: "a4", role: "assistant", text: "Okay.", interrupted: false, unheardText: "" },
  ]);
  expect(seen).toMatchObject({ sameSessionClass: true, sameErrorFamily: true, misuse: "StateError" });
});
