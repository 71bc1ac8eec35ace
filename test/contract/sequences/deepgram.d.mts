// Types of deepgram.mjs for the TypeScript suites.
export declare const deepgramSequences: import("./socket.mjs").Sequences;
/** "Can you help me?" as 16 kHz s16. */
export declare function helpMe(): Int16Array;
