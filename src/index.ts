/**
 * bargein: the one public barrel. Every export is listed by name; types are
 * exported with `export type`.
 */
export { Quest, QuestManager } from "./quest/index.js";
export type { QuestInit, QuestRun, QuestClose } from "./quest/index.js";
export {
  BargeinError,
  AssetLoadError,
  ConfigError,
  ProtocolError,
  AtCapacityError,
  ServiceTimeoutError,
  ConnectionClosedError,
  OverloadError,
  MicrophoneError,
  AudioContextError,
  isExpectedAtShutdown,
} from "./errors.js";
export type { BargeinErrorOptions, MicrophoneErrorReason } from "./errors.js";
export { isAbort } from "./util/abort.js";
export { Emitter } from "./util/emitter.js";
export type { Listener, EventMap } from "./util/emitter.js";
export { VERSION } from "./version.js";
