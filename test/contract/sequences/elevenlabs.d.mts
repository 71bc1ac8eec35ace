// Types of elevenlabs.mjs for the TypeScript suites.
export declare const elevenlabsSequences: import("./socket.mjs").Sequences;
