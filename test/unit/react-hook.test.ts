/**
 * bargein/react's useVoiceSession on a scripted hooks runtime
 * (react-hooks-runtime.ts; test/browser/react-hook.spec.ts runs it on React 19
 * itself, in Chromium) and the public fakes:
 * StrictMode's double mount opens one microphone and one session, an unmount
 * releases it, and the snapshot follows the session's events.
 */
import { describe, expect, test } from "vitest";
import { fakeAudio, fakeLlm, fakeStt, fakeTts } from "../../src/testing/index.js";
import { createUseVoiceSession, type UseVoiceSessionResult } from "../../src/react/use-voice-session.js";
import { FakeRoot } from "./react-hooks-runtime.js";
import { sleep, until } from "../lib/wait.mjs";

function setup(options: { autoStart?: boolean; replies?: string[] } = {}) {
  const stt = fakeStt();
  const audio = fakeAudio({ stt });
  const replies = [...(options.replies ?? ["Hello there."])];
  const llm = fakeLlm({ reply: () => replies.shift() ?? "Okay.", msPerWord: 1 });
  const root = new FakeRoot<UseVoiceSessionResult>((hooks) =>
    createUseVoiceSession(hooks)({ stt: stt.provider, llm: llm.provider, tts: fakeTts({ secondsPerWord: 0.05 }).provider, components: audio.components, autoStart: options.autoStart }),
  );
  return { root, audio, stt };
}

const macrotask = () => sleep(5);

describe("useVoiceSession", () => {
  test("StrictMode double mount with autoStart: one session, one microphone; unmount releases it", async () => {
    const t = setup({ autoStart: true });
    t.root.mount({ strict: true });
    await until(() => t.root.result.state === "listening");
    await macrotask();
    expect(t.audio.starts).toBe(1); // the components (the mic) were made once
    expect(t.audio.disposals).toBe(0); // the StrictMode unmount did not stop it
    expect(t.stt.openStreams).toBe(1);
    const session = t.root.result.session;
    t.root.unmount();
    await until(() => t.audio.disposals === 1);
    expect(session.state).toBe("idle");
    expect(session.liveQuests).toEqual([]);
    expect(t.stt.openStreams).toBe(0);
    await macrotask();
    expect(t.audio.starts).toBe(1);
  });

  test("unmounted while start() is still opening the mic: the session ends stopped, nothing left open", async () => {
    const t = setup({ autoStart: true });
    t.root.mount();
    t.root.unmount();
    await until(() => t.audio.disposals === t.audio.starts && t.stt.openStreams === 0);
    await macrotask();
    await macrotask();
    expect(t.audio.starts).toBeLessThanOrEqual(1);
    expect(t.audio.disposals).toBe(t.audio.starts);
    expect(t.stt.openStreams).toBe(0);
  });

  test("the snapshot follows the session: state, transcript rows by id, heard history, mute; the controls are stable", async () => {
    const t = setup({ replies: ["one two three"] });
    t.root.mount({ strict: true });
    expect(t.root.result.state).toBe("idle");
    const { start, mute } = t.root.result;
    await t.root.result.start();
    expect(t.root.result.state).toBe("listening");
    expect(t.audio.starts).toBe(1);
    await t.audio.user.says("hi bot");
    await until(() => t.root.result.state === "bot_speaking");
    await t.audio.player.play();
    await until(() => t.root.result.state === "listening");
    const rows = t.root.result.transcript;
    expect(rows.map((r) => [r.role, r.text, r.final])).toEqual([
      ["user", "hi bot", true],
      ["assistant", "one two three", true],
    ]);
    expect(new Set(rows.map((r) => r.id)).size).toBe(2);
    expect(t.root.result.history.map((m) => m.text)).toEqual(["hi bot", "one two three"]);
    t.root.result.mute();
    expect(t.root.result.muted).toBe(true);
    expect(t.root.result.levels().input.rmsDb).toBe(-100);
    expect(t.root.result.start).toBe(start);
    expect(t.root.result.mute).toBe(mute);
    await t.root.result.stop();
    expect(t.root.result.state).toBe("idle");
    t.root.unmount();
  });

  test("after the last unmount, a late control call (an animation frame's levels(), mute()) makes no new session", async () => {
    const t = setup({ autoStart: true });
    t.root.mount();
    await until(() => t.root.result.state === "listening");
    const { levels, mute, sendText } = t.root.result;
    t.root.unmount();
    await until(() => t.audio.disposals === 1);
    expect(levels()).toEqual({ input: { rmsDb: -100 }, output: { rmsDb: -100 } });
    mute();
    sendText("hello");
    await macrotask();
    expect(t.audio.starts).toBe(1);
    expect(t.stt.openStreams).toBe(0);
  });

  test("the history in a snapshot is a copy: the session's messages changing in place do not change a rendered one", async () => {
    const t = setup({ autoStart: true, replies: ["One two three four five."] });
    t.root.mount();
    await until(() => t.root.result.state === "listening");
    t.root.result.sendText("hi");
    await until(() => t.root.result.state === "bot_speaking");
    await t.audio.player.play();
    await until(() => t.root.result.history.length === 2 && t.root.result.state === "listening");
    const shown = t.root.result.history;
    const live = t.root.result.session.history;
    expect(shown[1]).toEqual(live[1]);
    expect(shown[1]).not.toBe(live[1]);
    t.root.unmount();
  });

  test("a start() that fails sets `error` instead of throwing", async () => {
    const stt = fakeStt();
    const root = new FakeRoot<UseVoiceSessionResult>((hooks) =>
      createUseVoiceSession(hooks)({
        stt: stt.provider,
        llm: fakeLlm({ reply: () => "x" }).provider,
        tts: fakeTts().provider,
        components: async () => {
          throw new Error("no microphone here");
        },
      }),
    );
    root.mount();
    await root.result.start();
    expect(root.result.error?.message).toBe("no microphone here");
    expect(root.result.state).toBe("idle");
    root.unmount();
  });

  test("`loading` sums the VAD's two assets while connecting, and says cached once both are in; a new start() begins again", async () => {
    const stt = fakeStt();
    const audio = fakeAudio({ stt });
    const seen: Array<[string, unknown]> = [];
    let cached = false;
    const root = new FakeRoot<UseVoiceSessionResult>((hooks) =>
      createUseVoiceSession(hooks)({
        stt: stt.provider,
        llm: fakeLlm({ reply: () => "x" }).provider,
        tts: fakeTts().provider,
        components: async (context) => {
          const report = (asset: "model" | "wasm", loaded: number, total: number, last = false) => {
            context.onProgress?.({ asset, url: `/${asset}`, loaded, total, ...(last ? { cached } : {}) });
            seen.push([root.result.state, root.result.loading]);
          };
          report("model", 0, 100);
          report("wasm", 500, 1000);
          report("model", 100, 100, true);
          report("wasm", 1000, 1000, true);
          return audio.components(context);
        },
      }),
    );
    root.mount();
    await root.result.start();
    expect(seen).toEqual([
      ["connecting", { loaded: 0, total: 100, cached: undefined }],
      ["connecting", { loaded: 500, total: 1100, cached: undefined }],
      ["connecting", { loaded: 600, total: 1100, cached: undefined }],
      ["connecting", { loaded: 1100, total: 1100, cached: false }],
    ]);
    await root.result.stop();
    cached = true;
    seen.length = 0;
    await root.result.start();
    expect(seen.map(([, l]) => l)).toEqual([
      { loaded: 0, total: 100, cached: undefined },
      { loaded: 500, total: 1100, cached: undefined },
      { loaded: 600, total: 1100, cached: undefined },
      { loaded: 1100, total: 1100, cached: true },
    ]);
    root.unmount();
  });
});
