/**
 * bargein/testing: fakes for users' own tests. Nothing here is used by the SDK
 * itself; these stand in for remote services where a real one is not wanted.
 */
export { scriptedQuest } from "./scripted-quest.js";
export type { ScriptedQuestLog } from "./scripted-quest.js";
export { fakeStt, fakeLlm, fakeTts } from "./fake-providers.js";
export type { FakeSttControl } from "./fake-providers.js";
