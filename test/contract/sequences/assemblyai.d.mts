// Types of assemblyai.mjs for the TypeScript suites.
export declare const assemblyaiSequences: import("./socket.mjs").Sequences;
