// Types of gemini.mjs for the TypeScript suites.
export declare const geminiSequences: import("./socket.mjs").Sequences;
