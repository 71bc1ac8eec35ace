// The scripted conversation of testing-public-fakes.test.ts, run by plain Node
// (no vitest, no transform) on the built package, imported by its own name as
// an app would import it: "bargein" and "bargein/testing" resolve through
// package.json's exports to dist/bargein.js and dist/testing.js.
// Prints what it saw as one JSON line; testing-dist.test.ts checks it.
import { VoiceSession, BargeinError } from "bargein";
import { fakeSession } from "bargein/testing";

const { session, user, player, waitForState, waitForReply } = fakeSession({ replies: ["Sure, I can help. What do you need?", "Okay."] });
const seen = { states: [], finals: [], interruptions: [] };
session.on("state", (e) => seen.states.push(e.state));
session.on("transcript", (e) => e.final && seen.finals.push(`${e.role}: ${e.text}`));
session.on("interruption", (e) => seen.interruptions.push({ reason: e.reason, heardText: e.heardText, unheardText: e.unheardText }));

await session.start();
await user.says("can you help me");
await waitForState("bot_speaking");
await waitForReply();
await player.play(1000);
await user.says("wait a moment");
await waitForState("bot_speaking");
await player.play();
await session.stop();

let misuse;
try {
  user.startSpeaking();
  user.startSpeaking();
} catch (err) {
  misuse = err;
}
console.log(
  JSON.stringify({
    ...seen,
    history: session.history,
    // One class, not a copy bundled into dist/testing.js.
    sameSessionClass: session instanceof VoiceSession,
    sameErrorFamily: misuse instanceof BargeinError,
    misuse: misuse?.name,
  }),
);
