/**
 * The bot's audio routed through a local WebRTC loopback into a hidden
 * `<audio>` element, instead of straight to the AudioContext's destination.
 *
 * Why: Chromium's echo canceller takes as its reference only what WebRTC
 * plays out, not Web Audio output (crbug 687574), so with open speakers the
 * browser's own canceller never sees the bot. Peers that play Web Audio get
 * around it the same way: a MediaStreamAudioDestinationNode → one
 * RTCPeerConnection → a second one in the same page → an `<audio>` element
 * (Hubs-Foundation/hubs PR #2361, azlen/cozyroom #4, BabylonJS #13247).
 * Whether Chromium's canceller then removes the bot in a real room cannot be
 * verified on a machine with no speakers; what this route costs (its added
 * latency) is measured (README, "Open speakers"). bargein's own echo guard
 * works with or without it: its reference is the playback worklet's output.
 *
 * The loopback runs over host candidates on this machine only (no STUN or
 * TURN server: `iceServers: []`), and the audio never leaves the page.
 * Thread: main. Owns both peer connections, the element and a stats timer.
 */
import { AudioContextError, ConfigError } from "../errors.js";
import { abortable } from "../util/abort.js";
import { timeout } from "../util/timeout.js";

export interface WebrtcLoopback {
  /** Connect the player's node here. */
  readonly input: AudioNode;
  /** The element that plays the bot (hidden, not in the document); its `setSinkId` moves the bot to another output. */
  readonly element: HTMLAudioElement;
  /**
   * Seconds the loopback adds between the worklet's render and the element's
   * playout: the receiver's mean jitter-buffer delay (WebRTC stats,
   * `jitterBufferDelay / jitterBufferEmittedCount`) plus one Opus packet.
   * Refreshed once a second; the packet time alone until the first report.
   */
  readonly latency: number;
  close(): void;
}

/** Opus's default packet: 20 ms. */
const PACKET_S = 0.02;
const STATS_INTERVAL_MS = 1000;

/**
 * Opens the loopback. Rejects with a ConfigError when the browser has no
 * RTCPeerConnection, and an AudioContextError when the two connections do not
 * connect within `timeoutMs` or the element refuses to play.
 */
export async function openWebrtcLoopback(context: AudioContext, { timeoutMs = 5000 }: { timeoutMs?: number } = {}): Promise<WebrtcLoopback> {
  if (typeof globalThis.RTCPeerConnection !== "function" || typeof context.createMediaStreamDestination !== "function") {
    throw new ConfigError('audio.outputRoute "webrtc-loopback": this browser has no RTCPeerConnection or MediaStreamAudioDestinationNode; leave audio.outputRoute unset');
  }
  const destination = context.createMediaStreamDestination();
  const sender = new RTCPeerConnection({ iceServers: [] });
  const receiver = new RTCPeerConnection({ iceServers: [] });
  const element = new Audio();
  element.autoplay = true;
  let statsTimer: ReturnType<typeof setInterval> | undefined;
  let latency = PACKET_S;
  const limit = timeout(timeoutMs);
  const close = () => {
    clearInterval(statsTimer);
    element.pause();
    element.srcObject = null;
    sender.close();
    receiver.close();
    destination.disconnect();
  };
  try {
    sender.onicecandidate = (e) => e.candidate && void receiver.addIceCandidate(e.candidate).catch(() => {});
    receiver.onicecandidate = (e) => e.candidate && void sender.addIceCandidate(e.candidate).catch(() => {});
    const track = abortable<MediaStreamTrack>((resolve) => {
      receiver.ontrack = (e) => resolve(e.track);
    }, limit.signal);
    sender.addTrack(destination.stream.getAudioTracks()[0]!, destination.stream);
    await sender.setLocalDescription(await sender.createOffer());
    await receiver.setRemoteDescription(sender.localDescription!);
    await receiver.setLocalDescription(await receiver.createAnswer());
    await sender.setRemoteDescription(receiver.localDescription!);
    const rtpReceiver = receiver.getReceivers()[0];
    // The smallest jitter buffer the browser allows: packets on a loopback arrive at once and in order.
    if (rtpReceiver && "jitterBufferTarget" in rtpReceiver) (rtpReceiver as RTCRtpReceiver & { jitterBufferTarget: number }).jitterBufferTarget = 0;
    await connected(receiver, limit.signal);
    element.srcObject = new MediaStream([await track]);
    await element.play();
  } catch (cause) {
    close();
    const why = limit.expired ? `its two connections did not connect within ${timeoutMs} ms` : ((cause as Error)?.message ?? String(cause));
    throw new AudioContextError(`audio.outputRoute "webrtc-loopback" could not start: ${why}; leave audio.outputRoute unset to play through the AudioContext`, { service: "audio", cause });
  } finally {
    limit.clear();
  }
  statsTimer = setInterval(async () => {
    try {
      const stats = await receiver.getStats();
      stats.forEach((s: { type: string; kind?: string; jitterBufferDelay?: number; jitterBufferEmittedCount?: number }) => {
        if (s.type === "inbound-rtp" && s.kind === "audio" && s.jitterBufferEmittedCount) latency = PACKET_S + (s.jitterBufferDelay ?? 0) / s.jitterBufferEmittedCount;
      });
    } catch {
      // A closed connection has no stats: the last figure stands.
    }
  }, STATS_INTERVAL_MS);
  return {
    input: destination,
    element,
    get latency() {
      return latency;
    },
    close,
  };
}

/** Resolves once `pc` is connected; rejects if it fails or closes, or when `signal` aborts. */
function connected(pc: RTCPeerConnection, signal: AbortSignal): Promise<void> {
  return abortable<void>((resolve, reject) => {
    const check = () => {
      if (pc.connectionState === "connected") resolve();
      else if (pc.connectionState === "failed" || pc.connectionState === "closed") reject(new Error(`the loopback's connection ${pc.connectionState}`));
    };
    pc.addEventListener("connectionstatechange", check);
    check();
    return () => pc.removeEventListener("connectionstatechange", check);
  }, signal);
}
