// The developer panel (closed by default): the events log, the levels, the
// STT uplink's queue and the latency chart. Warnings land here, counted on
// the panel's toggle, with one short line beside the service pickers: they
// help whoever looks, and do not stand between a newcomer and the conversation.
import { drawLatencyChart } from "./latency-chart.js";

/** `els`: panel, badge, events, mic, vad, uplink, uplinkText, timeline, notice. */
export function createDevPanel(els) {
  const turns = [];
  let notices = 0;

  function log(kind, text) {
    const li = document.createElement("li");
    li.className = kind;
    li.textContent = `${new Date().toLocaleTimeString()} ${kind}: ${text}`;
    els.events.prepend(li);
  }

  /** A warning: logged, counted on the toggle, and named in one quiet line near the pickers. */
  function warn(text) {
    log("warning", text);
    notices += 1;
    els.badge.hidden = false;
    els.badge.textContent = `${notices} ${notices === 1 ? "notice" : "notices"}`;
    els.notice.hidden = false;
    els.notice.textContent = `${text.replace(/;.*$/, "")}. Details in the developer panel.`;
  }

  // The chart is measured against its width, which is 0 while the panel is closed.
  els.panel.addEventListener("toggle", () => els.panel.open && drawLatencyChart(els.timeline, turns));

  return {
    log,
    warn,
    /** Subscribes the panel to a session's events. */
    follow(session) {
      session.on("vad", (e) => {
        if (e.kind === "meter") {
          els.mic.style.width = `${Math.min(100, e.level * 300)}%`;
          els.vad.style.width = `${Math.round(e.probability * 100)}%`;
        } else if (e.kind !== "turnPrediction") log("vad", e.kind + (e.direct ? " (worker paused playback directly)" : ""));
      });
      session.on("interruption", ({ heardText, heardMs, reason, userTurnResumed }) =>
        log("interruption", `${reason}: heard ${Math.round(heardMs)} ms — “${heardText}”${userTurnResumed ? " (the user's turn went on: reply dropped)" : ""}`),
      );
      session.on("turn", (metrics) => {
        turns.push(metrics);
        drawLatencyChart(els.timeline, turns);
      });
      session.on("metrics", ({ uplink: u }) => {
        if (!u) return;
        const fill = Math.min(100, (u.pendingBytes / u.budgetBytes) * 100);
        els.uplink.style.width = `${fill}%`;
        els.uplink.classList.toggle("over", u.admissionRejects > 0 && fill >= 99);
        els.uplinkText.textContent = `${u.pendingBytes} / ${u.budgetBytes} B, rejects ${u.admissionRejects}, gap ${u.gapSamples}`;
      });
      session.on("overload", (e) => warn(`uplink overload (${e.reason}): policy ${e.policy}, ${e.pendingBytes} of ${e.budgetBytes} bytes pending`));
      session.on("warning", (e) => warn(`${e.service}: ${e.message}`));
      session.on("reconnecting", (e) => log("info", `${e.service} reconnecting (attempt ${e.attempt}, ${e.reason}) in ${Math.round(e.delayMs)} ms`));
      session.on("reconnected", (e) => log("info", `${e.service} is back after ${e.attempts} attempt(s)`));
      session.on("error", (e) => log("error", `${e.error.name}: ${e.error.message}${e.fatal ? " (session stopped)" : ""}`));
    },
  };
}
