// Exercises the global `Bargein` from the UMD bundle: a QuestManager replacement, from `Bargein.advanced`.
window.smoke = (async () => {
  const { VERSION } = window.Bargein;
  const { Quest, QuestManager } = window.Bargein.advanced;
  const log = [];
  const manager = new QuestManager();
  const make = (name, tag) =>
    new Quest(
      name,
      async () => {
        log.push(`${tag}:init`);
        return tag;
      },
      (_r, signal) => new Promise((resolve) => signal.addEventListener("abort", resolve, { once: true })),
      () => log.push(`${tag}:close`),
    );
  await manager.add(make("tts", "a"));
  await manager.add(make("tts", "b"));
  await manager.dispose();
  let evalBlocked = false;
  try {
    (0, eval)("1 + 1");
  } catch {
    evalBlocked = true;
  }
  return { version: VERSION, log, evalBlocked, isolated: self.crossOriginIsolated };
})();
