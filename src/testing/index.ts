/**
 * bargein/testing: fakes for users' own tests. Nothing here is used by the SDK
 * itself; these stand in for remote services and for the browser's audio
 * where a real one is not wanted, so a VoiceSession runs a whole scripted
 * conversation in Node (see docs/testing.md).
 *
 * The SDK's classes come from its public entries ("../index.js",
 * "../advanced.js"): in the built package, dist/testing.js imports them from
 * dist/bargein.js and dist/advanced.js rather than bundling a copy, so
 * `instanceof` and the error classes agree with the app's.
 */
export { scriptedQuest } from "./scripted-quest.js";
export type { ScriptedQuestLog } from "./scripted-quest.js";
export { fakeStt, fakeLlm, fakeTts } from "./fake-providers.js";
export type { FakeSttControl, FakeLlmTurn, FakeLlmRequest } from "./fake-providers.js";
export { FakeClock } from "./fake-clock.js";
export { FakePlayer } from "./fake-player.js";
export type { FakePlayerOptions } from "./fake-player.js";
export { FakeUser, FakeVad, FakeMicrophone } from "./fake-user.js";
export type { FakeUserOptions } from "./fake-user.js";
export { fakeAudio } from "./fake-audio.js";
export type { FakeAudio, FakeAudioOptions } from "./fake-audio.js";
export { fakeSession } from "./fake-session.js";
export type { FakeSession, FakeSessionOptions } from "./fake-session.js";
export { FakeDevices } from "./fake-devices.js";
export type { FakeDevicesOptions } from "./fake-devices.js";
