// C2 probes: what the kit's frame can reach on its own, by the paths the
// runner's own escape tests try that need nothing from the host. A network
// probe passes only when the browser reports a Content-Security-Policy
// violation for it (securitypolicyviolation): the proof that the policy
// stopped it, not a dead address; its target is an address the browser can
// reach (the host page's origin, else the kit's own document).
//
// The probes name the APIs an app must not use through computed names:
// `snuggen build` refuses an app that uses them directly, as it should.

import { REMOVED_GLOBALS } from "./gen/constants.mjs";
import { sleep } from "./wire.js";

const g = globalThis;
// Each name the packager's sandbox checks would refuse, spelled at run time.
const N = Object.fromEntries(
  ["fetch", "XMLHttpRequest", "WebSocket", "EventSource", "Worker", "localStorage", "sessionStorage", "indexedDB", "caches", "cookie", "open", "sendBeacon", "location"].map((n) => [n, n]),
);

const violations = [];
const watchers = new Set();
document.addEventListener("securitypolicyviolation", (e) => {
  const v = { uri: e.blockedURI, directive: e.effectiveDirective || e.violatedDirective };
  violations.push(v);
  for (const w of watchers) w(v);
});

/** How long a settled probe waits for its policy violation report. */
const VIOLATION_MS = 5000;

/** blockedBy resolves when the policy reports blocking a probe: match says which. */
const blockedBy = (match) =>
  new Promise((resolve) => {
    const seen = violations.find(match);
    if (seen) return resolve(seen);
    const w = (v) => match(v) && (watchers.delete(w), resolve(v));
    watchers.add(w);
  });

/** An http(s) address the browser can reach: the top host page's origin, else the kit's own. */
function target() {
  const anc = [...(location.ancestorOrigins || [])].filter((o) => /^https?:\/\//.test(o));
  if (anc.length) return anc[anc.length - 1] + "/";
  if (/^https?:\/\//.test(document.URL)) return document.URL.split("#")[0];
  return "https://conform.invalid/";
}

const within = (ms, f) =>
  new Promise((resolve) => {
    const t = setTimeout(() => resolve({ outcome: "silent", detail: `nothing within ${ms} ms` }), ms);
    const done = (v) => (clearTimeout(t), resolve(v));
    try {
      f(
        (detail) => done({ outcome: "succeeded", detail: String(detail) }),
        (e) => done({ outcome: "refused", detail: e?.name ? `${e.name}` : String(e) }),
      );
    } catch (e) {
      done({ outcome: "refused", detail: e?.name || String(e) });
    }
  });

const loads = (el, url, attr) => (ok, no) => {
  el.onload = () => ok("loaded");
  el.onerror = () => no(new Error("error event"));
  el[attr] = url;
  if (el.tagName == "SCRIPT") document.head.append(el);
};

// Each probe: [the call, which violation is its own].
function networkProbes(base) {
  const u = (name) => `${base}${base.includes("?") ? "&" : "?"}snug-conform-c2=${name}`;
  const ws = (name) => u(name).replace(/^http/, "ws");
  const its = (url) => (v) => v.uri == url;
  const probe = (name, url, run) => [name, (ok, no) => run(url, ok, no), its(url)];
  return [
    probe("fetch", u("fetch"), (url, ok, no) => g[N.fetch](url).then((r) => ok(r.status), no)),
    probe("fetch no-cors", u("fetch-no-cors"), (url, ok, no) => g[N.fetch](url, { mode: "no-cors" }).then((r) => ok(r.type), no)),
    probe("XMLHttpRequest", u("xhr"), (url, ok, no) => {
      const x = new g[N.XMLHttpRequest]();
      x.open("GET", url);
      x.onload = () => ok(x.status);
      x.onerror = () => no(new Error("error event"));
      x.send();
    }),
    probe("WebSocket", ws("websocket"), (url, ok, no) => {
      const w = new g[N.WebSocket](url);
      w.onopen = () => (ok("open"), w.close());
      w.onerror = () => no(new Error("error event"));
    }),
    probe("EventSource", u("eventsource"), (url, ok, no) => {
      const s = new g[N.EventSource](url);
      s.onopen = () => (ok("open"), s.close());
      s.onerror = () => (s.close(), no(new Error("error event")));
    }),
    // sendBeacon only queues: the violation, or its absence, is the answer.
    probe("sendBeacon", u("beacon"), (url) => navigator[N.sendBeacon](url, "x")),
    probe("import()", u("import"), (url, ok, no) => import(url).then(() => ok("imported"), no)),
    [
      "Worker",
      (ok, no) => {
        const w = new g[N.Worker](URL.createObjectURL(new Blob(["postMessage(1)"], { type: "text/javascript" })));
        w.onmessage = () => ok("ran");
        w.onerror = () => no(new Error("error event"));
      },
      (v) => v.directive == "worker-src",
    ],
    probe("image", u("image"), (url, ok, no) => loads(new Image(), url, "src")(ok, no)),
    probe("script", u("script"), (url, ok, no) => loads(document.createElement("script"), url, "src")(ok, no)),
  ];
}

/** c2Network: every network path refused, each with its policy violation to show for it. */
export async function c2Network(t) {
  const base = target();
  t.expect(`each probe to ${base} fails and the browser reports a CSP violation for it`);
  // All at once; each ends when it settles or the policy reports it (a
  // blocked beacon or script may never settle on its own).
  const results = await Promise.all(
    networkProbes(base).map(async ([name, run, match]) => {
      const start = performance.now();
      const blocked = blockedBy(match).then((v) => ({ outcome: "blocked", detail: "CSP violation", v }));
      const r = await Promise.race([within(3000, run), blocked]);
      // A probe that settled first still needs its violation, if any: the
      // browser reports it in a task of its own, which on a loaded machine
      // comes well after the probe's refusal. A host whose policy blocks
      // the probe gets it as soon as it comes; the bound is only for one
      // that does not (then the case fails: nothing shows the policy).
      const v = r.v || (await Promise.race([blocked.then((b) => b.v), sleep(VIOLATION_MS).then(() => null)]));
      return { name, ...r, v, ms: Math.round(performance.now() - start) };
    }),
  );
  const got = [];
  for (const r of results) {
    got.push(`${r.name}: ${r.outcome}${r.v ? ` (CSP ${r.v.directive})` : ""}`);
    t.ok(r.outcome != "succeeded", `${r.name} reached ${base}: ${r.detail}`);
    if (r.outcome != "succeeded") t.ok(r.v, `${r.name}: no CSP violation reported, so nothing shows the policy stopped it (${r.outcome}: ${r.detail})`);
  }
  t.saw(got.join("; "));
}

/** c2Storage: every kind of browser storage throws or is absent. */
export async function c2Storage(t) {
  t.expect("each throws or rejects (an opaque origin has no storage)");
  const probes = {
    localStorage: () => g[N.localStorage].length,
    sessionStorage: () => g[N.sessionStorage].length,
    indexedDB: () =>
      new Promise((ok, no) => {
        const r = g[N.indexedDB].open("snug-conform");
        r.onsuccess = () => ok("opened");
        r.onerror = () => no(r.error || new Error("error event"));
      }),
    cookie: () => document[N.cookie],
    caches: () => (g[N.caches] ? g[N.caches].keys().then((k) => k.length) : Promise.reject(new Error("absent"))),
  };
  const got = [];
  for (const [name, run] of Object.entries(probes)) {
    let r;
    try {
      const v = await Promise.race([Promise.resolve().then(run), sleep(2000).then(() => ({ silent: true }))]);
      r = v?.silent ? "silent" : `succeeded: ${JSON.stringify(v)}`;
    } catch (e) {
      r = `refused: ${e?.name || e}`;
    }
    got.push(`${name}: ${r}`);
    t.ok(!r.startsWith("succeeded"), `${name} is available to the frame (${r})`);
  }
  t.saw(got.join("; "));
}

/** c2Parent: the host's page cannot be read, and no window opens. */
export async function c2Parent(t) {
  t.expect("reading parent.document, top.document or parent.location throws; window.open returns null");
  const got = [];
  const reads = { "parent.document": () => parent.document.title, "top.document": () => top.document.title, "parent.location": () => parent[N.location].href };
  for (const [name, run] of Object.entries(reads)) {
    let r;
    try {
      r = `read: ${JSON.stringify(run())}`;
    } catch (e) {
      r = `refused: ${e?.name}`;
    }
    got.push(`${name}: ${r}`);
    t.ok(r.startsWith("refused"), `${name} is readable from the frame (${r})`);
  }
  let w;
  try {
    w = g[N.open](target(), "_blank");
  } catch (e) {
    w = null;
  }
  got.push(`window.open: ${w === null ? "null" : "a window"}`);
  t.ok(w === null, "window.open opened a window (the sandbox allows popups)");
  if (w) w.close?.();
  t.saw(got.join("; "));
}

/** c2WebRTC: the WebRTC constructors are gone, also in a frame the app creates. */
export async function c2WebRTC(t) {
  t.expect(`${REMOVED_GLOBALS.join(", ")}: undefined in the frame; a child frame refused, or the constructors unreachable or undefined in it`);
  const got = [];
  for (const name of REMOVED_GLOBALS) {
    got.push(`${name}: ${typeof g[name]}`);
    t.ok(typeof g[name] == "undefined", `${name} exists in the frame (the host did not remove it before the app ran)`);
  }
  // A frame the app creates gets fresh constructors unless the host keeps
  // them out of it: refusing the frame, or making it unreachable, both do.
  let f;
  try {
    f = document.createElement("iframe");
    document.body.append(f);
  } catch (e) {
    got.push(`child frame refused: ${e?.name}`);
    f = null;
  }
  for (const name of f ? REMOVED_GLOBALS : []) {
    let r;
    try {
      r = typeof f.contentWindow[name];
    } catch (e) {
      r = `refused: ${e?.name}`;
    }
    got.push(`child ${name}: ${r}`);
    t.ok(r != "function", `${name} can be taken from a child frame`);
  }
  f?.remove();
  t.saw(got.join("; "));
}
