export function elizaReply(userText: string): string;
export function streamPieces(reply: string): string[];
