/**
 * A VoiceSession on scripted parts, for the unit tests of its turn logic and
 * its events: the providers are the fakes of bargein/testing, the audio parts
 * a virtual player and VAD (test/unit/session-fakes.ts).
 */
import type { CapturePort, SessionComponents } from "../../src/session/ports.js";
import { VoiceSession } from "../../src/session/voice-session.js";
import { AtCapacityError } from "../../src/errors.js";
import type { SttProvider } from "../../src/providers/types.js";
import type { ReconnectPolicy } from "../../src/session/reconnect-policy.js";
import { fakeLlm, fakeStt, fakeTts } from "../../src/testing/fake-providers.js";
import { Emitter } from "../../src/util/emitter.js";
import { until } from "../lib/wait.mjs";
import { VirtualPlayer, VirtualVad } from "./session-fakes.js";

export function setup(opts: { minSpeechMs?: number; ttsFailAfterWords?: number; refuseConnections?: number[]; reconnect?: ReconnectPolicy; llmMsPerWord?: number } = {}) {
  const stt = fakeStt({ keepAudio: true });
  // Connections counted from 1; the ones listed are refused as a full service refuses them.
  let connections = 0;
  const sttProvider: SttProvider = {
    ...stt.provider,
    connect: async (signal) => {
      connections++;
      if (opts.refuseConnections?.includes(connections)) throw new AtCapacityError(`fake-stt: no free channels (connection ${connections})`, { service: "stt" });
      return stt.provider.connect(signal);
    },
  };
  const llm = fakeLlm({ reply: () => "one two three four five six", msPerWord: opts.llmMsPerWord ?? 1 });
  const tts = fakeTts({ secondsPerWord: 0.25, failAfterWords: opts.ttsFailAfterWords });
  const player = new VirtualPlayer();
  const vad = new VirtualVad();
  const captureEvents = new Emitter<any>();
  const capture: CapturePort = { on: (name: any, fn: any) => captureEvents.on(name, fn), setMeter: () => {} };
  let disposed = 0;
  const components: SessionComponents = { player, vad, capture, dispose: async () => void disposed++ };
  const session = new VoiceSession(
    { stt: sttProvider, llm: llm.provider, tts: tts.provider, instructions: "Be brief.", bargeIn: { minSpeechMs: opts.minSpeechMs ?? 30 }, reconnect: opts.reconnect, components: async () => components },
  );
  const states: string[] = [];
  session.on("state", (e) => states.push(e.state));
  return { session, stt, llm, tts, player, vad, captureEvents, states, disposedCount: () => disposed };
}

export async function speakAndReply(t: ReturnType<typeof setup>, words: string[]) {
  t.vad.emit("speechStart");
  for (const w of words) t.stt.word(w);
  t.vad.emit("speechEnd");
  await until(() => t.session.state === "bot_speaking");
  await until(() => t.tts.streams.at(-1)!.ended);
}
