// Types for assemblyai.mjs, for the TypeScript tests.
import type { DecoderPool } from "../pocketsphinx.mjs";

export type SocketCredentials = (url: URL, req: unknown) => { ok: true; maxSessionS: number } | { ok: false; reason: string };

export function createAssemblyAiService(deps: { stats: unknown; pool: DecoderPool | null; credentials: SocketCredentials }): (...args: unknown[]) => Promise<void>;
