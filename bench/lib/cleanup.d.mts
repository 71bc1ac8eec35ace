// Types for cleanup.mjs (for the TypeScript tests that import it).
export interface Tracked {
  name: string;
  stop: () => Promise<void> | void;
  killNow?: () => void;
}
export function track(item: Tracked): () => void;
export function tracked(): string[];
export function stopAll(): Promise<void>;
