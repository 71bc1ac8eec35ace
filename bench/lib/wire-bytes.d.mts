export interface TimedResponse {
  path: string;
  startAt: number;
  firstByteAt: number;
  endAt: number;
}
export function arrivedShare(r: TimedResponse, at: number): number;
export function bytesBefore(sent: Record<string, number>, timed: TimedResponse[], at: number): number;
export function sentBetween(before: Record<string, number> | undefined, after: Record<string, number> | undefined, prefix?: string): Record<string, number>;
export function sentFor(sent: Record<string, number>, suffixes: Record<string, string>): Record<string, number>;
export function recordResponses(page: import("@playwright/test").Page): { timed: TimedResponse[]; stop: () => void };
