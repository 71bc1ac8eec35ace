/**
 * Loading the worklet modules from `assetsPath`, once per context, and making
 * sure the context runs. Main thread only.
 */
import { AssetLoadError, AudioContextError } from "../errors.js";

const loaded = new WeakMap<BaseAudioContext, Map<string, Promise<void>>>();

/** The URL of `file` inside the `assetsPath` folder (relative paths resolve against the page). */
export function assetUrl(assetsPath: string, file: string): string {
  const folder = assetsPath.endsWith("/") ? assetsPath : `${assetsPath}/`;
  return new URL(file, new URL(folder, globalThis.location?.href)).href;
}

/**
 * Adds the module at `url` to `context` unless it already was. A missing or
 * broken file rejects with an AssetLoadError that names the URL.
 */
export function loadWorklet(context: BaseAudioContext, url: string): Promise<void> {
  let perContext = loaded.get(context);
  if (!perContext) loaded.set(context, (perContext = new Map()));
  let pending = perContext.get(url);
  if (!pending) {
    pending = context.audioWorklet.addModule(url).catch((cause: unknown) => {
      perContext.delete(url);
      throw new AssetLoadError(
        `Could not load the audio worklet ${url}: check that assetsPath points at the folder that holds bargein's dist/ files and that the server serves it`,
        { cause, url, service: "audio" },
      );
    });
    perContext.set(url, pending);
  }
  return pending;
}

/**
 * Resolves once `context` is running. Browsers keep a context suspended until
 * a user gesture, and `resume()` then never settles, hence the timeout.
 */
export async function ensureRunning(context: BaseAudioContext, timeoutMs = 3000): Promise<void> {
  if (context.state === "running") return;
  if (context.state === "closed") {
    throw new AudioContextError("The AudioContext is closed: create a new one (new AudioContext()) and pass it in", {
      service: "audio",
    });
  }
  if (!("resume" in context)) return; // an OfflineAudioContext runs when rendered
  let timer: ReturnType<typeof setTimeout> | undefined;
  try {
    await Promise.race([
      (context as AudioContext).resume(),
      new Promise((_, reject) => {
        timer = setTimeout(() => reject(new Error("timeout")), timeoutMs);
      }),
    ]);
  } catch (cause) {
    throw new AudioContextError(
      `The AudioContext did not start (state "${context.state}"): create or resume it from a user gesture such as a click`,
      { cause, service: "audio" },
    );
  } finally {
    clearTimeout(timer);
  }
}
