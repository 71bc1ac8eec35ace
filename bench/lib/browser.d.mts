// Types for browser.mjs (for the TypeScript tests that import it).
import type { Browser } from "@playwright/test";

export interface BenchServerExit {
  code: number | null;
  signal: string | null;
  stderrTail: string;
}
export interface BenchServer {
  base: string;
  port: number;
  pid: number | undefined;
  /** The nonce given to this child (BARGEIN_INSTANCE), echoed in its X-Bargein-Instance header. */
  instance: string;
  /** Rejects, naming the exit code and the end of stderr, if the backend exits before close(). */
  died: Promise<never>;
  exited(): BenchServerExit | undefined;
  /** SIGTERM, then SIGKILL after 5 s; resolves once the child has exited. */
  close(): Promise<void>;
}
export function benchPort(fallback: number): number;
export function assertPortFree(port: number): Promise<void>;
export function startServer(options?: { port?: number; env?: Record<string, string>; probePort?: boolean }): Promise<BenchServer>;
export function launchBrowser(extraArgs?: string[]): Promise<Browser>;
