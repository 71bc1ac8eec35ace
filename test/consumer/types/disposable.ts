/**
 * Only checked with tsconfig.disposable.json (an app whose lib has
 * esnext.disposable): there Quest, QuestManager and VadWorker are
 * AsyncDisposable, so `await using` takes them. Under plain ES2022 the
 * member is absent instead of breaking the build (src/util/async-dispose.ts).
 */
import { Quest, QuestManager, VadWorker } from "bargein/advanced";

export async function scoped(): Promise<void> {
  await using quests = new QuestManager();
  await using quest = new Quest("stt", () => 1, async () => {});
  await using vad = new VadWorker({ assetsPath: "/bargein/" });
  const disposables: AsyncDisposable[] = [quests, quest, vad];
  await quests.add(quest);
  await vad.start();
  void disposables;
}
