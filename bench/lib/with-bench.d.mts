// Types for with-bench.mjs (for the TypeScript tests that import it).
import type { Browser } from "@playwright/test";
import type { BenchServer } from "./browser.mjs";

export interface BenchContext {
  server: BenchServer;
  browser: Browser;
  step<T>(name: string, fn: () => Promise<T> | T, options?: { timeoutMs?: number }): Promise<T>;
  run(
    cmd: string,
    args: string[],
    options?: { env?: Record<string, string>; timeoutMs?: number; name?: string },
  ): Promise<{ status: number | null; signal: string | null; stdout: string; stderr: string }>;
}
export interface WithBenchOptions {
  port?: number | null;
  env?: Record<string, string>;
  browser?: boolean;
  browserArgs?: string[];
  stepTimeoutMs?: number;
}
/** The bound of opening or closing a page or context (ms). */
export const PAGE_OP_MS: number;
export function withBench<T>(options: WithBenchOptions, body: (context: BenchContext) => Promise<T>): Promise<T>;
export function bounded<T>(name: string, fn: () => Promise<T> | T, timeoutMs: number, server: BenchServer | undefined): Promise<T>;
