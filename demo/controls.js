// The demo's session controls: mute, push-to-talk, the device pickers, the
// text box, the loading bar while connecting, and the error banner. Each is
// one public call or event of VoiceSession (README: "Controls"); nothing here
// reaches inside the SDK. Shared by the ES-module page and the script-tag page
// (their markup is in markup.js).

/** The controls' elements, looked up once; the banner's Dismiss works from then on. */
export function controlElements($) {
  $("error-dismiss").addEventListener("click", () => ($("error-banner").hidden = true));
  // The Hold to talk button is only there in push-to-talk mode (the mode is picked before Start).
  $("ptt-mode").addEventListener("change", () => ($("talk").hidden = !$("ptt-mode").checked));
  return {
    pttMode: $("ptt-mode"), talk: $("talk"), mute: $("mute"), inputDevice: $("input-device"), outputDevice: $("output-device"),
    outputLevel: $("output-level"),
    loading: $("loading"), loadingBar: $("loading-bar"), loadingText: $("loading-text"),
    errorBanner: $("error-banner"), errorText: $("error-text"), errorDismiss: $("error-dismiss"),
    say: $("say"), sayText: $("say-text"), saySend: $("say-send"),
  };
}

/** The session options the controls decide before start(). */
export function controlOptions(c) {
  return c.pttMode.checked ? { turn: { mode: "push-to-talk" } } : {};
}

/**
 * Shows `text` in the error banner until dismissed or the next start, with what to do about it:
 * an error that stopped the session needs a new Start; the others say what they did themselves.
 */
export function showError(c, text, { stopped = false } = {}) {
  c.errorText.textContent = stopped ? `${text}. The session stopped: press Start to try again.` : text;
  c.errorBanner.hidden = false;
}

/**
 * Wires the controls to a session that is about to start. Returns a function
 * that disables them again, for when it stops.
 */
export function wireControls(c, session, { log }) {
  const offs = [];
  const pushToTalk = c.pttMode.checked;
  c.errorBanner.hidden = true;
  c.pttMode.disabled = true;

  // Loading: the VAD's model and wasm, in bytes. The session listens before they are in (it is
  // `degraded` until Silero is ready), so the bar stays up until the VAD says it is ready.
  const loading = {};
  const showLoading = () => {
    c.loading.hidden = !(session.state === "connecting" || session.degraded);
  };
  offs.push(
    session.on("progress", ({ asset, loaded, total, cached }) => {
      loading[asset] = { loaded, total, cached };
      const assets = Object.values(loading);
      const sum = (key) => assets.reduce((n, a) => n + a[key], 0);
      // A compressed answer has no total until its last byte: say the bytes so far, not "of 0".
      const totalKnown = assets.every((a) => a.total > 0);
      showLoading();
      c.loadingBar.max = Math.max(1, sum("total"));
      // With no total yet, an indeterminate bar (no value).
      if (totalKnown) c.loadingBar.value = sum("loaded");
      else c.loadingBar.removeAttribute("value");
      const warm = assets.every((a) => a.cached === true);
      const amount = totalKnown ? `${(sum("loaded") / 1e6).toFixed(1)} of ${(sum("total") / 1e6).toFixed(1)} MB` : `${(sum("loaded") / 1e6).toFixed(1)} MB`;
      c.loadingText.textContent = `loading the voice detector: ${amount}${warm ? " (from the cache)" : ""}`;
    }),
    session.on("state", showLoading),
    session.on("vad", (e) => e.kind === "ready" && showLoading()),
  );

  // Errors: fatal ones stop the session; the others are shown too, since each says what to do.
  offs.push(session.on("error", ({ error, fatal }) => showError(c, `${error.name}: ${error.message}`, { stopped: fatal })));

  // Mute keeps the microphone open (a quantum to unmute) and sends silence: no barge-in, no turn.
  const setMuteLabel = (muted) => {
    c.mute.textContent = muted ? "Unmute" : "Mute";
    c.mute.setAttribute("aria-pressed", String(muted));
  };
  setMuteLabel(false);
  const onMute = () => (session.muted ? session.unmute() : session.mute());
  c.mute.addEventListener("click", onMute);
  offs.push(() => c.mute.removeEventListener("click", onMute));
  offs.push(session.on("mute", ({ muted }) => setMuteLabel(muted)));

  // Push-to-talk: the button (or the space bar outside the text box) holds the turn open.
  if (pushToTalk) {
    let held = false;
    const down = (e) => {
      if (held || session.state === "idle" || session.state === "connecting") return;
      e.preventDefault();
      held = true;
      c.talk.classList.add("held");
      session.startTurn();
    };
    const up = () => {
      if (!held) return;
      held = false;
      c.talk.classList.remove("held");
      if (session.state !== "idle") session.endTurn();
    };
    const key = (handler) => (e) => e.code === "Space" && e.target !== c.sayText && !e.repeat && handler(e);
    const keyDown = key(down);
    const keyUp = key(up);
    c.talk.addEventListener("pointerdown", down);
    c.talk.addEventListener("pointerup", up);
    c.talk.addEventListener("pointerleave", up);
    document.addEventListener("keydown", keyDown);
    document.addEventListener("keyup", keyUp);
    offs.push(() => {
      c.talk.removeEventListener("pointerdown", down);
      c.talk.removeEventListener("pointerup", up);
      c.talk.removeEventListener("pointerleave", up);
      document.removeEventListener("keydown", keyDown);
      document.removeEventListener("keyup", keyUp);
    });
  }

  // Devices: the pickers list what the browser has (labels once the mic is allowed), and follow devicechange.
  const fill = (select, devices, current) => {
    select.replaceChildren(new Option("default", ""), ...devices.filter((d) => d.deviceId && d.deviceId !== "default").map((d, i) => new Option(d.label || `device ${i + 1}`, d.deviceId)));
    select.value = [...select.options].some((o) => o.value === current) ? current : "";
  };
  const listDevices = async () => {
    const all = await navigator.mediaDevices.enumerateDevices();
    fill(c.inputDevice, all.filter((d) => d.kind === "audioinput"), c.inputDevice.value);
    fill(c.outputDevice, all.filter((d) => d.kind === "audiooutput"), c.outputDevice.value);
  };
  offs.push(
    session.on("devicechange", ({ inputLost }) => {
      void listDevices();
      if (inputLost) log("warning", "the microphone in use went away; the session moved to the default one");
    }),
  );
  offs.push(session.on("inputDevice", ({ deviceId, reason, gapMs }) => log("info", `input device ${deviceId || "default"} (${reason}): ${Math.round(gapMs)} ms of audio lost in the swap`)));
  const onInput = () =>
    session.setInputDevice(c.inputDevice.value || undefined).catch((err) => showError(c, `${err.name}: ${err.message}`));
  // The browser's setSinkId where it has it; elsewhere the picker stays off (audio plays on the default output).
  const canPickOutput = typeof AudioContext !== "undefined" && typeof AudioContext.prototype.setSinkId === "function";
  const onOutput = () =>
    session.setOutputDevice(c.outputDevice.value).then(
      () => log("info", `output device ${c.outputDevice.value || "default"}`),
      (err) => showError(c, `${err.name}: ${err.message}`),
    );
  c.inputDevice.addEventListener("change", onInput);
  c.outputDevice.addEventListener("change", onOutput);
  offs.push(() => {
    c.inputDevice.removeEventListener("change", onInput);
    c.outputDevice.removeEventListener("change", onOutput);
  });

  // Typed turns go through the same reply path as spoken ones (and interrupt the bot like them).
  const onSay = (e) => {
    e.preventDefault();
    const text = c.sayText.value.trim();
    if (!text || session.state === "idle" || session.state === "connecting") return;
    session.sendText(text);
    c.sayText.value = "";
  };
  c.say.addEventListener("submit", onSay);
  offs.push(() => c.say.removeEventListener("submit", onSay));

  // The bot's level, read once a frame with getLevels() (an AnalyserNode read: nothing runs when not read).
  let frame = 0;
  const drawLevel = () => {
    const db = session.getLevels().output.rmsDb;
    c.outputLevel.style.width = `${Math.max(0, Math.min(100, ((db + 60) / 60) * 100)).toFixed(0)}%`;
    frame = requestAnimationFrame(drawLevel);
  };
  offs.push(() => {
    cancelAnimationFrame(frame);
    c.outputLevel.style.width = "0%";
  });

  return {
    /** start() resolved: the controls that need a running session come on. */
    listening() {
      frame = requestAnimationFrame(drawLevel);
      c.mute.disabled = false;
      c.talk.disabled = !pushToTalk;
      c.sayText.disabled = false;
      c.saySend.disabled = false;
      c.inputDevice.disabled = false;
      c.outputDevice.disabled = !canPickOutput;
      void listDevices();
    },
    /** The session stopped (or never started): everything off, ready for the next start. */
    stopped() {
      for (const off of offs.splice(0)) off();
      for (const el of [c.mute, c.talk, c.sayText, c.saySend, c.inputDevice, c.outputDevice]) el.disabled = true;
      c.talk.classList.remove("held");
      c.pttMode.disabled = false;
      c.loading.hidden = true;
    },
  };
}
