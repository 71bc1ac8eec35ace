// Types of openai.mjs for the TypeScript suites.
export declare const openaiSequences: import("./socket.mjs").Sequences;
