// Types for static.mjs, so TypeScript tests can use it.
import type { IncomingMessage, ServerResponse } from "node:http";

export const STRICT_CSP: string;
export function isolationHeaders(): Record<string, string>;
/** A handler that serves files under `root` (top-level folders in `allow`); false when it did not handle the request. */
export function createStaticHandler(
  root: string,
  allow?: string[],
  options?: { precompressed?: boolean; onSent?: (pathname: string, bytes: number) => void },
): (req: IncomingMessage, res: ServerResponse) => boolean;
