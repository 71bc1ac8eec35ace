export declare const BENCH_PROVIDERS: Record<string, "pair" | "stt" | "tts">;
export declare const DEFAULT_PROVIDER: string;
export declare function parseBenchArgs(argv: string[]): { names: string[]; provider: string | undefined };
export declare function resultName(bench: string, provider: string | undefined): string;
