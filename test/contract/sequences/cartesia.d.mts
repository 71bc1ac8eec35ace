// Types of cartesia.mjs for the TypeScript suites.
export declare const cartesiaSequences: import("./socket.mjs").Sequences;
