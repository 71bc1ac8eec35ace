// Types for send-pacing.mjs (the TypeScript tests import it).
export function frameDueAt(p: { firstAt: number; sentSeconds: number; burstS: number; pace: number }): number;
