// The kit's raw-frame layer: it posts frames to the host exactly as given
// (the runtime would refuse or shape them) and keeps a log of every message
// the host sends, including those the runtime's acceptors drop. It trusts
// only window.parent, by event.source, as the runtime does.
//
// Waiting: answer(id) waits for a frame carrying that requestId exactly;
// "nothing comes back" is judged with a fence: a frame the host must answer
// at once (an unsupported version with a fresh requestId, answered by the
// frame layer, R1), then a short grace for hosts that do not keep order.

import { PROTOCOL_VERSIONS, TYPE_APP_CANCEL, TYPE_APP_RESPONSE, TYPE_HOST_EVENT } from "./gen/constants.mjs";

/** Every message from the parent: {n, at, data}. */
export const log = [];
const waiters = new Set();
const observers = [];

addEventListener("message", (e) => {
  if (e.source !== parent) return;
  const m = { n: log.length, at: performance.now(), data: e.data };
  log.push(m);
  for (const fn of observers) fn(m);
  for (const w of [...waiters])
    if (w.test(m)) {
      waiters.delete(w);
      w.done(m);
    }
});

/** observe calls fn for every message from now on. */
export const observe = (fn) => observers.push(fn);

/** post sends one value to the host as it is. */
export const post = (value) => parent.postMessage(value, "*");

export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/**
 * next resolves with the first message from index `from` on that passes
 * test, or null after ms.
 */
export function next(test, ms, from = log.length) {
  for (let i = from; i < log.length; i++) if (test(log[i])) return Promise.resolve(log[i]);
  return new Promise((resolve) => {
    const w = { test, done: resolve };
    waiters.add(w);
    setTimeout(() => waiters.has(w) && (waiters.delete(w), resolve(null)), ms);
  });
}

/** The snug frames (objects with a string type) logged from index `from`. */
export const framesSince = (from) => log.slice(from).map((m) => m.data).filter(isFrame);

export const isFrame = (d) => d !== null && typeof d == "object" && typeof d.type == "string";

/** isTerminal: R3's terminal frames (every answer but streaming text). */
export const isTerminal = (f) => !(f.type == TYPE_APP_RESPONSE && f.ok === true && f.streaming === true);

/** The frames carrying requestId id exactly, logged from index `from`. */
export const framesFor = (id, from) => framesSince(from).filter((f) => f.requestId === id);

const nonce = Math.random().toString(36).slice(2, 8);
let seq = 0;
/** A fresh requestId for the kit's own raw frames: unique, readable. */
export const newId = (label) => `conform-${label}-${++seq}-${nonce}`;

/** A version number no host speaks. */
export const BAD_VERSION = Math.max(...PROTOCOL_VERSIONS) + 1;

/** How long the kit waits for an answer, and the grace after a fence. */
export const ANSWER_MS = 15000;
const FENCE_MS = 5000;
const GRACE_MS = 150;

/**
 * answer posts frame and waits for its first terminal frame (the requestId
 * echoed exactly). Returns {terminal, from}: terminal is null when none came
 * within ms.
 */
export async function answer(frame, ms = ANSWER_MS) {
  const from = log.length;
  post(frame);
  const m = await next((m) => isFrame(m.data) && m.data.requestId === frame.requestId && isTerminal(m.data), ms, from);
  return { terminal: m && m.data, from };
}

/**
 * fence waits until the host has handled everything posted before it: it
 * posts a frame of an unsupported version with a fresh requestId, which the
 * host answers at once (R1), then waits a moment more. It reports whether
 * the fence was answered.
 */
export async function fence() {
  const id = newId("fence");
  const from = log.length;
  post({ v: BAD_VERSION, type: TYPE_APP_CANCEL, requestId: id });
  const m = await next((m) => isFrame(m.data) && m.data.requestId === id, FENCE_MS, from);
  await sleep(GRACE_MS);
  return !!m;
}

/** Whether a logged message is one of the kit's fences' answers. */
export const isFence = (d) => isFrame(d) && typeof d.requestId == "string" && d.requestId.startsWith("conform-fence-");

/**
 * unexpectedSince lists what the host sent from index `from` on, other than
 * fence answers, host-events and the frames allow accepts: what a "nothing
 * comes back" check must not see.
 */
export const unexpectedSince = (from, allow = () => false) =>
  log
    .slice(from)
    .map((m) => m.data)
    .filter((d) => !isFence(d) && !(isFrame(d) && d.type == TYPE_HOST_EVENT) && !allow(d));
