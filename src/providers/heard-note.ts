/**
 * The note that tells a speech-to-speech model what the user heard of its
 * interrupted turn. Neither service keeps that text for the client: Gemini
 * Live keeps everything it sent (it has no truncate), and OpenAI Realtime's
 * truncate deletes the item's transcript ("Truncating audio will delete the
 * server-side text transcript",
 * https://platform.openai.com/docs/api-reference/realtime-client-events/conversation/item/truncate).
 * Owner of the wording for both providers.
 */
export function heardNote(heard: string): string {
  return heard
    ? `(The user interrupted your last answer. They heard only this much of it: "${heard}". Treat the rest as not said.)`
    : "(The user interrupted your last answer before hearing any of it. Treat it as not said.)";
}
