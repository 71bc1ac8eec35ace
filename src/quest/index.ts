export { Quest } from "./quest.js";
export type { QuestInit, QuestRun, QuestClose } from "./quest.js";
export { QuestManager } from "./quest-manager.js";
