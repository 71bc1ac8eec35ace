export interface ScriptedCall {
  name: string;
  arguments: Record<string, unknown>;
}
export function offeredTools(body: unknown): string[];
export function toolTurn(body: unknown, userText: string): { kind: "call"; call: ScriptedCall } | { kind: "answer"; text: string } | undefined;
export function argumentPieces(json: string): string[];
