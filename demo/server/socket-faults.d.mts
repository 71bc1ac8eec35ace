/** When each of the last few streams sent each message (Date.now(), in order), newest last. */
export declare const recentSends: number[][];
