/**
 * bargein/react: `useVoiceSession(options)`. React is the app's own (a peer
 * dependency, left out of this bundle); the SDK is bargein's main bundle.
 */
import * as React from "react";
import { createUseVoiceSession, type ReactHooks, type UseVoiceSession } from "./use-voice-session.js";

export const useVoiceSession: UseVoiceSession = createUseVoiceSession(React as unknown as ReactHooks);
export { createUseVoiceSession };
export type { ReactHooks, UseVoiceSession, UseVoiceSessionResult } from "./use-voice-session.js";
export { VoiceSessionStore } from "./voice-session-store.js";
export type { UseVoiceSessionOptions, VoiceSessionSnapshot, TranscriptRow } from "./voice-session-store.js";
