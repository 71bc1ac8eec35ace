/**
 * Devices and visualizer data on the public fakes (bargein/testing): an input
 * swap mid-session keeps the session, its VAD and its STT stream (the next
 * words are a turn, no reconnect), a failed swap keeps the old device, an
 * unplugged input falls back to the default with a warning, the output
 * device goes to the player's sink, and getLevels() reads both sides. The
 * real swap (getUserMedia, the worklet's source node) is tested in Chromium
 * (test/browser/devices.spec.ts).
 */
import { describe, expect, test } from "vitest";
import { FakeDevices, fakeSession } from "../../src/testing/index.js";
import { ConfigError, MicrophoneError, VoiceSession, type DeviceChangeEvent, type InputDeviceEvent } from "../../src/index.js";
import { fakeLlm, fakeStt, fakeTts } from "../../src/testing/index.js";
import { Emitter } from "../../src/util/emitter.js";
import type { CapturePort, PlayerPort, SessionComponents, VadPort } from "../../src/session/ports.js";
import { sleep, until } from "../lib/wait.mjs";

const tick = () => sleep(0);

describe("setInputDevice()", () => {
  test("mid-session: the capture moves, the state, the STT stream and the turn go on; the gap is reported and counted", async () => {
    const devices = new FakeDevices({ inputs: ["default", "usb-headset"] });
    const t = fakeSession({ replies: ["Sure."], devices });
    const { session, user, stt } = t;
    const swaps: InputDeviceEvent[] = [];
    session.on("inputDevice", (e) => swaps.push(e));
    const reconnects: unknown[] = [];
    session.on("reconnecting", (e) => reconnects.push(e));
    await session.start();
    user.mic.swapGapMs = 21.3;
    user.startSpeaking();
    await user.word("what");
    await session.setInputDevice("usb-headset");
    await user.word("time");
    await user.stopSpeaking();
    await t.waitForState("bot_speaking");
    expect(user.mic.deviceId).toBe("usb-headset");
    expect(swaps).toEqual([{ deviceId: "usb-headset", reason: "app", gapMs: 21.3 }]);
    // One turn with the words from both devices, on the same STT stream.
    expect(session.history[0]).toMatchObject({ role: "user", text: "what time" });
    expect(reconnects).toEqual([]);
    expect(stt.openStreams).toBe(1);
    expect(session.metrics.devices).toEqual({ inputSwaps: 1, lastSwapGapMs: 21.3, maxSwapGapMs: 21.3 });
    await session.stop();
  });

  test("a device that cannot be opened: the promise rejects naming it, the old device keeps running and the session listens", async () => {
    const devices = new FakeDevices({ inputs: ["default"] });
    const t = fakeSession({ replies: ["Yes."], devices });
    await t.session.start();
    const err = await t.session.setInputDevice("gone-mic").catch((e) => e);
    expect(err).toBeInstanceOf(MicrophoneError);
    expect(err.message).toContain('"gone-mic"');
    expect(t.user.mic.deviceId).toBe("default");
    expect(t.session.state).toBe("listening");
    expect(t.session.metrics.devices.inputSwaps).toBe(0);
    await t.user.says("still here");
    await t.waitForState("bot_speaking");
    expect(t.session.history[0]).toMatchObject({ text: "still here" });
    await t.session.stop();
  });

  test("before start(), the pick is what start() opens", async () => {
    const t = fakeSession({ devices: new FakeDevices({ inputs: ["default", "usb"] }) });
    await t.session.setInputDevice("usb");
    await t.session.start();
    expect(t.user.mic.deviceId).toBe("usb");
    await t.session.stop();
  });

  test("an empty deviceId is a ConfigError; components without capture.setDevice make it a ConfigError", async () => {
    const t = fakeSession();
    await expect(t.session.setInputDevice("")).rejects.toBeInstanceOf(ConfigError);
    const session = bareSession();
    await session.start();
    await expect(session.setInputDevice("x")).rejects.toThrow(/capture\.setDevice/);
    await expect(session.setOutputDevice("y")).rejects.toThrow(/player\.setSinkId/);
    expect(session.state).toBe("listening");
    await session.stop();
  });
});

describe("devicechange", () => {
  test("a device plugged in: the lists, inputLost false, nothing moves", async () => {
    const devices = new FakeDevices({ inputs: ["default"], outputs: ["default"] });
    const t = fakeSession({ devices });
    const changes: DeviceChangeEvent[] = [];
    t.session.on("devicechange", (e) => changes.push(e));
    await t.session.start();
    devices.plug("input", "usb");
    await until(() => changes.length === 1);
    expect(changes[0].inputs.map((d) => d.deviceId)).toEqual(["default", "usb"]);
    expect(changes[0].outputs.map((d) => d.deviceId)).toEqual(["default"]);
    expect(changes[0].inputLost).toBe(false);
    expect(t.user.mic.swaps).toEqual([]);
    await t.session.stop();
    // Stopped: the watch is gone.
    devices.plug("input", "other");
    await tick();
    expect(changes).toHaveLength(1);
  });

  test("the input in use is unplugged: a warning, the default takes over, the session keeps listening and hears the next turn", async () => {
    const devices = new FakeDevices({ inputs: ["default", "usb"] });
    const t = fakeSession({ replies: ["Fine."], devices });
    const warnings: string[] = [];
    const swaps: InputDeviceEvent[] = [];
    const changes: DeviceChangeEvent[] = [];
    t.session.on("warning", (e) => warnings.push(e.message));
    t.session.on("inputDevice", (e) => swaps.push(e));
    t.session.on("devicechange", (e) => changes.push(e));
    await t.session.start();
    await t.session.setInputDevice("usb");
    devices.unplug("input", "usb");
    await until(() => swaps.length === 2);
    expect(changes.at(-1)?.inputLost).toBe(true);
    expect(swaps[1]).toMatchObject({ deviceId: undefined, reason: "fallback" });
    expect(t.user.mic.deviceId).toBe("default");
    expect(warnings.some((w) => w.includes('"usb"') && w.includes("default input"))).toBe(true);
    expect(t.session.state).toBe("listening");
    await t.user.says("hello again");
    await t.waitForState("bot_speaking");
    expect(t.session.history[0]).toMatchObject({ text: "hello again" });
    await t.session.stop();
  });

  test("the track ends (unplugged): the default takes over instead of a fatal error; components that cannot swap still fail", async () => {
    const t = fakeSession({ devices: new FakeDevices() });
    const errors: unknown[] = [];
    t.session.on("error", (e) => errors.push(e));
    await t.session.start();
    t.user.micEnded();
    await until(() => t.user.mic.swaps.length === 1);
    expect(t.user.mic.swaps).toEqual([undefined]);
    expect(errors).toEqual([]);
    expect(t.session.state).toBe("listening");
    await t.session.stop();
  });
});

describe("setOutputDevice()", () => {
  test("moves the player's sink, before and during the session", async () => {
    const t = fakeSession();
    await t.session.setOutputDevice("speakers-2");
    await t.session.start();
    expect(t.player.sinkId).toBe("speakers-2");
    await t.session.setOutputDevice("");
    expect(t.player.sinkId).toBe("");
    await t.session.stop();
  });
});

describe("getLevels()", () => {
  test("silence before start(); the input rises while the user speaks (even muted), the output while the bot plays", async () => {
    const t = fakeSession({ replies: ["one two three four"] });
    expect(t.session.getLevels()).toEqual({ input: { rmsDb: -100 }, output: { rmsDb: -100 } });
    await t.session.start();
    expect(t.session.getLevels().input.rmsDb).toBe(-100);
    t.user.startSpeaking();
    expect(t.session.getLevels().input.rmsDb).toBeGreaterThan(-40);
    const withBins = t.session.getLevels({ bins: true });
    expect(withBins.input.bins?.length).toBe(128);
    expect(Math.max(...withBins.input.bins!)).toBeGreaterThan(0);
    await t.user.word("hello");
    await t.user.stopSpeaking();
    expect(t.session.getLevels().input.rmsDb).toBe(-100);
    await t.waitForState("bot_speaking");
    await t.waitForReply();
    expect(t.session.getLevels().output.rmsDb).toBeGreaterThan(-40);
    await t.player.play();
    expect(t.session.getLevels().output.rmsDb).toBe(-100);
    await t.session.stop();
    expect(t.session.getLevels().input.rmsDb).toBe(-100);
  });
});

/** A session on components with none of the optional methods (an app's own, older ones). */
function bareSession(): VoiceSession {
  const stt = fakeStt();
  const events = new Emitter<any>();
  const on = (name: any, fn: any) => events.on(name, fn);
  const player = { write() {}, setGeneration() {}, endGeneration() {}, flush() {}, pause() {}, resume() {}, renderedSeconds: () => 0, outputLatency: 0, on } as unknown as PlayerPort;
  const vad = { setAutoPause() {}, setMeter() {}, on } as unknown as VadPort;
  const capture: CapturePort = { setMeter() {}, on } as unknown as CapturePort;
  const components: SessionComponents = { player, vad, capture, dispose: async () => {} };
  return new VoiceSession({ stt: stt.provider, llm: fakeLlm({ reply: () => "ok" }).provider, tts: fakeTts().provider, components: async () => components });
}
