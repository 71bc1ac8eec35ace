/**
 * `await using` on Quest, QuestManager and VadWorker: the method is installed
 * on each prototype (src/util/async-dispose.ts) rather than declared in the
 * class body, so that the public .d.ts compile without the esnext libs. Here:
 * the method is really there, behaves as a class method would, and runs the
 * class's own cleanup at the end of the block.
 */
import { describe, expect, test } from "vitest";
import { Quest } from "../../src/quest/quest.js";
import { QuestManager } from "../../src/quest/quest-manager.js";
import { VadWorker } from "../../src/vad/vad-worker-client.js";

describe("await using", () => {
  test("each class has [Symbol.asyncDispose] on its prototype, non-enumerable as a class method is", () => {
    for (const ctor of [Quest, QuestManager, VadWorker]) {
      const descriptor = Object.getOwnPropertyDescriptor(ctor.prototype, Symbol.asyncDispose);
      expect(typeof descriptor?.value, ctor.name).toBe("function");
      expect(descriptor?.enumerable).toBe(false);
    }
  });

  test("a QuestManager disposed by `await using` has removed its quests and refuses new ones", async () => {
    const closed: string[] = [];
    let outer: QuestManager;
    {
      await using manager = new QuestManager();
      outer = manager;
      const quest = new Quest(
        "llm",
        () => "socket",
        (_resource, signal) => new Promise<void>((resolve) => signal.addEventListener("abort", () => resolve())),
        (resource) => void closed.push(resource),
      );
      await manager.add(quest);
      expect(manager.names).toEqual(["llm"]);
    }
    expect(closed).toEqual(["socket"]);
    expect(outer.size).toBe(0);
    await expect(outer.add(new Quest("tts", () => 1, async () => {}))).rejects.toMatchObject({ name: "StateError" });
  });

  test("a VadWorker disposed by `await using` is stopped", async () => {
    let outer: VadWorker;
    {
      await using vad = new VadWorker({ assetsPath: "/assets/" });
      outer = vad;
      expect(vad.state).toBe("idle");
    }
    expect(outer.state).toBe("stopped");
  });
});
