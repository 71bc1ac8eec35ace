// Types of socket.mjs for the TypeScript suites (the .mjs is shared with scripts/check-live.mjs).
export interface Check {
  rule: string;
  ok: boolean;
  got: string;
}
/** A service's sequences by name; each runs against a target (the emulator or the live service). */
export type Sequences = Record<string, (target: any) => Promise<{ checks: Check[]; messages: Record<string, any>[] }>>;
export declare const WAIT_MS: number;
export declare function check(rule: string, ok: boolean, got: unknown): Check;
