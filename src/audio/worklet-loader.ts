/**
 * Loading the worklet modules (from the URLs of src/assets/asset-urls.ts),
 * once per context, and making sure the context runs. Main thread only.
 */
import { ASSET_LABELS, assetHint, type AssetName } from "../assets/asset-urls.js";
import { AssetLoadError, AudioContextError } from "../errors.js";

const loaded = new WeakMap<BaseAudioContext, Map<string, Promise<void>>>();

/**
 * Adds the module at `url` to `context` unless it already was. A missing or
 * broken file rejects with an AssetLoadError that names the asset, the URL,
 * what the server answered, and the option to set.
 */
export function loadWorklet(context: BaseAudioContext, url: string, asset: AssetName): Promise<void> {
  let perContext = loaded.get(context);
  if (!perContext) loaded.set(context, (perContext = new Map()));
  let pending = perContext.get(url);
  if (!pending) {
    pending = context.audioWorklet.addModule(url).catch(async (cause: unknown) => {
      perContext.delete(url);
      const answer = await describeAnswer(url);
      throw new AssetLoadError(`Could not load the audio worklet ${url} (the ${ASSET_LABELS[asset]}${answer}): ${assetHint(asset)}`, {
        cause,
        url,
        service: "audio",
      });
    });
    perContext.set(url, pending);
  }
  return pending;
}

/**
 * addModule() only says that it failed. One GET of the same URL tells a
 * missing file (404) from an app's HTML fallback page (a dev server or SPA
 * host answering 200 with index.html for any path), the usual two causes.
 * Used on failure only; says nothing when the fetch itself is refused.
 */
export async function describeAnswer(url: string): Promise<string> {
  try {
    const response = await fetch(url, { cache: "no-store" });
    void response.body?.cancel().catch(() => {});
    if (!response.ok) return `: the server answered HTTP ${response.status}`;
    const type = response.headers.get("content-type") ?? "";
    if (type.includes("text/html")) return ": the server answered an HTML page, not the script (a fallback page for a missing file?)";
    if (type && !/javascript|ecmascript/.test(type)) return `: the server answered ${type}, not a JavaScript MIME type`;
    return "";
  } catch {
    return "";
  }
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
    throw new AudioContextError(`The AudioContext did not start (state "${context.state}") within ${timeoutMs} ms: ${whyNotRunning()}`, { cause, service: "audio" });
  } finally {
    clearTimeout(timer);
  }
}

/**
 * The two usual causes of a context that will not start, told apart by the
 * browser's autoplay policy where it says it (`navigator.getAutoplayPolicy`,
 * Firefox), else by the page's user activation: with no gesture yet, the
 * autoplay policy; after one, no audio output (no device, or no audio
 * service: a context then never runs, in Firefox and WebKit alike).
 */
function whyNotRunning(): string {
  const nav = globalThis.navigator as { userActivation?: { hasBeenActive: boolean }; getAutoplayPolicy?: (type: string) => string } | undefined;
  // Firefox says its policy outright; elsewhere the page's user activation tells.
  let policy: string | undefined;
  try {
    policy = nav?.getAutoplayPolicy?.("audiocontext");
  } catch {}
  const activation = nav?.userActivation;
  const autoplay = "the browser's autoplay policy holds audio until the user interacts with the page: call start() from a user gesture such as a click";
  const output = "no audio output device is available (none connected or enabled, or the system's audio service is not running): connect speakers or headphones, then try again";
  if (policy === "allowed") return `audio may play here without a gesture, so most likely ${output}`;
  if (policy === "disallowed" || (activation && !activation.hasBeenActive)) return autoplay;
  if (activation) return `the page has had a user gesture, so most likely ${output}`;
  return `either ${autoplay}, or ${output}`;
}
