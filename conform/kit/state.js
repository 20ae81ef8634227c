// The kit's shared state: what it knows about the host, and its side of the
// driver protocol (window.snugConform): what it wants done, what the driver
// reported.

import { VERSION } from "./gen/constants.mjs";

const $ = (id) => document.getElementById(id);
export const KIT = "snug-conform";

/** What the kit knows about the host, filled as it learns it. */
export const env = {
  transport: "unknown", // "snug" (raw frames) or "mcp-apps" (JSON-RPC: no raw frames)
  host: null, // snug.ready's host-ready fields
  driver: null, // {name, dialogs} once a driver attached
  apiErrors: [], // errors of host answers seen through the runtime API (R5 in MCP Apps)
  current: null, // the running case's context
  only: null, // the case ids a driver asked for; null runs them all
  started: false, // the cases have begun (a driver's "only" comes too late)
  onDriver: () => {}, // called when a driver attaches
};

// ---- the driver's side ----------------------------------------------------

let wants = null; // {id, kind, url?, name?, shown?, decision?}: what the kit needs a driver or a person to do
const driverEvents = new Map(); // wants id -> resolve
export const unexpected = [];
let attached;
/** Resolves when a driver attaches. */
export const driverAttached = new Promise((r) => (attached = r)); // dialogs the driver saw while the kit asked for none

window.snugConform = {
  kit: KIT,
  version: VERSION,
  report: null,
  /** The state a driver polls: status and what the kit wants done. */
  state: () => ({ status: document.documentElement.dataset.conform || "loading", wants }),
  /**
   * A driver says it is attached: {name, dialogs: whether it answers them,
   * only?: the ids of the cases to run, when it attaches before they start}.
   */
  driver(info) {
    env.driver = { name: String(info?.name || "driver"), dialogs: !!info?.dialogs };
    if (Array.isArray(info?.only) && !env.started) env.only = info.only.map(String);
    env.onDriver();
    attached();
    return true;
  },
  /** The driver answered the dialog the kit asked for and says what it showed. */
  answered: (a) => settle(a?.id, { answered: a }),
  /** The driver found no dialog for the kit's request (reason says why). */
  noDialog: (a) => settle(a?.id, { noDialog: String(a?.reason || "no dialog") }),
  /** The driver did what a host-event request asked (or could not: none). */
  provoked: (a) => settle(a?.id, { provoked: a }),
  /** The driver saw (and denied) a dialog the kit did not ask for. */
  unexpected(d) {
    const seen = { kind: String(d?.kind || ""), url: String(d?.url || "") };
    unexpected.push(seen);
    env.current?.dialogs.push(seen);
    return true;
  },
};

function settle(id, value) {
  const done = driverEvents.get(id);
  if (!done) return false;
  driverEvents.delete(id);
  done(value);
  return true;
}

/**
 * ask sets what the kit wants done (a dialog answered, a host-event
 * provoked) and resolves with the driver's report, or null after ms; its
 * close() withdraws the request (the case is over).
 */
export function ask(w, ms) {
  wants = w;
  const box = $("wants");
  box.hidden = false;
  box.textContent =
    w.kind == "open-url" || w.kind == "save-file"
      ? `The host should now show its own dialog for ${w.shown}. Choose ${w.decision == "deny" ? "“Deny” or “Cancel”" : w.kind == "save-file" ? "“Save”" : "“Open”"}.`
      : `Waiting for the host to send a host-event (toggle the theme if the host has a toggle).`;
  const close = () => {
    settle(w.id, null);
    if (wants === w) {
      wants = null;
      box.hidden = true;
    }
  };
  const p = new Promise((resolve) => {
    driverEvents.set(w.id, resolve);
    setTimeout(close, ms);
  });
  p.close = close;
  return p;
}

