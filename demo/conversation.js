// The conversation view: the session's state as a pill, and the transcript,
// one row per message id (TranscriptEvent: "keep one row per id"). A reply
// the user talked over shows its heard part and, struck, its unheard part;
// each bot reply says how long after the user's turn it began.

/** The state pill's words, for a person (the raw state stays in data-state). */
const STATE_LABELS = {
  idle: "Idle",
  connecting: "Connecting…",
  listening: "Listening",
  reconnecting: "Reconnecting…",
  user_speaking: "You're speaking",
  bot_thinking: "Thinking",
  bot_speaking: "Speaking",
};

/** "reply began 640 ms after you stopped", from the turn's metrics; undefined when nothing was heard. */
export function latencyReadout(metrics) {
  if (metrics.voiceToVoiceMs !== undefined) return `reply began ${Math.round(metrics.voiceToVoiceMs)} ms after you stopped`;
  // A typed turn (or push-to-talk let go mid-word): measured from the end of the turn, not of the voice.
  if (metrics.speechEndToFirstAudibleMs !== undefined) return `reply began ${Math.round(metrics.speechEndToFirstAudibleMs)} ms after your turn ended`;
  return metrics.interrupted ? "cut before any of it played" : undefined;
}

function element(tag, className, text) {
  const el = document.createElement(tag);
  if (className) el.className = className;
  if (text !== undefined) el.textContent = text;
  return el;
}

/** `els`: state, transcript, partial, empty, chat (the scrolled box). */
export function createConversation(els) {
  /** @type {Map<string, HTMLLIElement>} */
  const rows = new Map();
  /** Replies the SDK dropped from the history because the user's turn went on: their late events are ignored. */
  const dropped = new Set();
  let replyId; // the reply being generated or played (its final event not seen yet)
  let awaitingLatency; // the last finished reply's row: the `turn` event that follows it is its latency

  const scrollToEnd = () => (els.chat.scrollTop = els.chat.scrollHeight);

  function row(id, role) {
    let li = rows.get(id);
    if (li) return li;
    li = element("li", role);
    li.dataset.role = role;
    li.dataset.id = id;
    if (role === "assistant") li.append(element("div", "text"), element("div", "meta"));
    els.transcript.append(li);
    rows.set(id, li);
    els.empty.hidden = true;
    return li;
  }
  const textOf = (li) => li.querySelector(".text") ?? li;

  function onTranscript({ id, role, text, final, revised }) {
    if (role === "user") {
      // Partial words show below the transcript; a final (or revised: late words) message is a row.
      if (final || revised || rows.has(id)) {
        row(id, "user").textContent = text;
        els.partial.textContent = "";
      } else els.partial.textContent = text;
      scrollToEnd();
      return;
    }
    if (dropped.has(id)) return;
    if (final) {
      if (replyId === id) replyId = undefined;
      awaitingLatency = rows.get(id);
      // A reply cut before any text came (its final text is empty) has no row: nothing was said.
      if (!awaitingLatency && !text) return;
    } else replyId = id;
    const li = row(id, "assistant");
    if (final) awaitingLatency = li;
    if (li.dataset.interrupted !== "true") textOf(li).textContent = text;
    scrollToEnd();
  }

  function onInterruption({ heardText, unheardText, userTurnResumed }) {
    const li = replyId && rows.get(replyId);
    if (!li) return;
    if (userTurnResumed) {
      // The user's turn went on: the SDK drops this reply from the history and answers the whole turn
      // once it ends. Its row goes too, so a turn shows one reply (it was often the same words twice).
      dropped.add(replyId);
      rows.delete(replyId);
      li.remove();
      replyId = undefined;
      return;
    }
    const heard = element("span", "heard", heardText);
    heard.dataset.testid = "heard";
    const unheard = element("span", "unheard", unheardText ? `${heardText ? " " : ""}${unheardText}` : "");
    unheard.dataset.testid = "unheard";
    textOf(li).replaceChildren(heard, unheard);
    li.dataset.interrupted = "true";
    const tag = element("span", "tag", "interrupted");
    li.querySelector(".meta").prepend(tag);
  }

  function onTurn(metrics) {
    const li = awaitingLatency;
    awaitingLatency = undefined;
    const text = li && latencyReadout(metrics);
    if (!text) return;
    const readout = element("span", "latency", text);
    readout.dataset.testid = "reply-latency";
    li.querySelector(".meta").append(readout);
  }

  /** A tool call is a row of its own, above the reply that uses it; its result fills it in. */
  const toolRows = new Map();
  function onToolCall({ call }) {
    const li = element("li", "tool", `${call.name}(${call.rawArguments || ""}) …`);
    li.dataset.role = "tool";
    li.dataset.testid = "tool-call";
    const reply = replyId && rows.get(replyId);
    if (reply) els.transcript.insertBefore(li, reply);
    else els.transcript.append(li);
    toolRows.set(call.id, li);
  }
  function onToolResult({ id, name, status, output, durationMs }) {
    const li = toolRows.get(id);
    if (li) li.textContent = `${name} → ${status === "ok" ? output : status} (${Math.round(durationMs)} ms)`;
    toolRows.delete(id);
  }

  function setState(state) {
    els.state.textContent = STATE_LABELS[state] ?? state;
    els.state.dataset.state = state;
  }

  return {
    setState,
    /** Subscribes the view to a session's events; returns nothing (the session's stop ends them). */
    follow(session) {
      // A new session numbers its messages afresh: the old rows stay on screen, but are no longer looked up.
      rows.clear();
      dropped.clear();
      toolRows.clear();
      replyId = undefined;
      awaitingLatency = undefined;
      session.on("state", ({ state }) => setState(state));
      session.on("transcript", onTranscript);
      session.on("interruption", onInterruption);
      session.on("turn", onTurn);
      session.on("toolCall", onToolCall);
      session.on("toolResult", onToolResult);
    },
  };
}
