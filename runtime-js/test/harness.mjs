// A simulated sandboxed iframe for the runtime tests: a fresh VM realm per
// test holding a window whose parent is a scripted host, a document with
// <meta> tags, a ResizeObserver the test drives, and the real built runtime
// (dist/snug.js, the file apps ship) evaluated inside it. Messages cross with
// structuredClone on a later task, the way postMessage delivers them.

import { readFileSync } from "node:fs";
import vm from "node:vm";

const runtimes = {};
const load = (name) => (runtimes[name] ||= readFileSync(new URL("../dist/" + name, import.meta.url), "utf8"));

const tick = () => new Promise((r) => setImmediate(r));

/**
 * Creates a document with the given meta tags (name without "snug:" → content)
 * and runs the runtime (dist/snug.js, or the file runtime names) in it. The document stays "loading" until
 * env.domReady() unless loaded is true.
 */
export function createEnv({ meta = {}, title = "Test app", loaded = false, runtime = "snug.js" } = {}) {
  const posted = []; // every frame the app sent, in order
  const waiters = []; // {type, resolve}
  const listeners = { message: new Set() };
  const docListeners = { DOMContentLoaded: new Set() };
  const attrs = {};
  const styles = {};
  const observers = [];
  let height = 0;

  const parent = {
    postMessage(data, targetOrigin) {
      if (targetOrigin !== "*") throw new Error(`targetOrigin ${targetOrigin}, want "*"`);
      const frame = structuredClone(data);
      posted.push(frame);
      const i = waiters.findIndex((w) => w.type === frame.type);
      if (i >= 0) waiters.splice(i, 1)[0].resolve(frame);
    },
  };
  const root = {
    setAttribute: (k, v) => (attrs[k] = String(v)),
    getAttribute: (k) => attrs[k] ?? null,
    // dataset as the DOM has it: a camelCase key is a data-kebab-case attribute.
    dataset: new Proxy(
      {},
      {
        set: (_, k, v) => ((attrs["data-" + k.replace(/[A-Z]/g, "-$&").toLowerCase()] = String(v)), true),
        get: (_, k) => attrs["data-" + String(k).replace(/[A-Z]/g, "-$&").toLowerCase()],
      },
    ),
    style: {
      setProperty: (k, v) => (styles[k] = v),
      removeProperty: (k) => delete styles[k],
      getPropertyValue: (k) => styles[k] ?? "",
    },
    getBoundingClientRect: () => ({ height, width: 300 }),
  };
  const document = {
    readyState: loaded ? "complete" : "loading",
    title,
    documentElement: root,
    querySelector(sel) {
      const m = /^meta\[name="snug:([a-z-]+)"\]$/.exec(sel);
      if (!m) throw new Error(`unexpected selector ${sel}`);
      return m[1] in meta ? { content: meta[m[1]] } : null;
    },
    addEventListener: (t, fn) => docListeners[t]?.add(fn),
  };
  class ResizeObserver {
    constructor(cb) {
      this.cb = cb;
      observers.push(this);
    }
    observe(el) {
      this.el = el;
    }
    disconnect() {}
  }
  // Forms are exercised in a real browser (browser_test.go); the runtime
  // only needs the prototype to exist here.
  class HTMLFormElement {}
  // Links are exercised in a real browser too; here the prototype's click
  // and the listeners the runtime adds only need to exist.
  class HTMLAnchorElement {
    click() {}
  }
  // The runtime wraps attachShadow to see links in closed shadow roots.
  class Element {
    attachShadow() {}
  }
  // The runtime's timers, tracked so that a test can wait until those set
  // so far have run (afterTimers) instead of for a while.
  const timers = new Map(); // id -> its promise's resolve
  const setTimeoutTracked = (fn, ms, ...args) => {
    let done;
    const ran = new Promise((r) => (done = r));
    const id = setTimeout(() => {
      try {
        fn(...args);
      } finally {
        timers.delete(id);
        done();
      }
    }, ms);
    timers.set(id, { ran, done });
    return id;
  };
  const clearTimeoutTracked = (id) => {
    clearTimeout(id);
    timers.get(id)?.done();
    timers.delete(id);
  };
  const g = {
    document,
    parent,
    ResizeObserver,
    HTMLFormElement,
    HTMLAnchorElement,
    Element,
    URL: class extends URL {},
    Blob,
    Headers,
    Response,
    TextEncoder,
    TextDecoder,
    atob,
    btoa,
    setTimeout: setTimeoutTracked,
    clearTimeout: clearTimeoutTracked,
    queueMicrotask,
    structuredClone,
    console,
    AbortController,
    addEventListener: (t, fn) => (listeners[t] ||= new Set()).add(fn),
    removeEventListener: (t, fn) => listeners[t]?.delete(fn),
  };
  g.window = g;
  g.self = g;
  vm.createContext(g);
  vm.runInContext(load(runtime), g, { filename: "dist/" + runtime });

  const env = {
    snug: g.snug,
    window: g,
    parent,
    posted,
    attrs,
    styles,
    /** Fires DOMContentLoaded at the document; it bubbles to the window. */
    domReady() {
      document.readyState = "interactive";
      docListeners.DOMContentLoaded.forEach((fn) => fn());
      listeners.DOMContentLoaded?.forEach((fn) => fn());
    },
    /** Delivers data to the app as a message from source (default: the parent). */
    async send(data, source = parent) {
      await tick();
      const ev = { data: structuredClone(data), source, origin: "null" };
      listeners.message.forEach((fn) => fn(ev));
      await tick();
    },
    /** The next frame of this type the app posts (or one already posted and not yet taken). */
    next(type, timeoutMs = 1000) {
      const i = posted.findIndex((f) => f.type === type && !f.taken);
      if (i >= 0) {
        posted[i].taken = true;
        return Promise.resolve(posted[i]);
      }
      return new Promise((resolve, reject) => {
        const w = {
          type,
          resolve: (f) => {
            clearTimeout(timer);
            f.taken = true;
            resolve(f);
          },
        };
        const timer = setTimeout(() => {
          waiters.splice(waiters.indexOf(w), 1);
          reject(new Error(`no ${type} frame within ${timeoutMs} ms; posted: ${posted.map((f) => f.type).join(", ")}`));
        }, timeoutMs);
        waiters.push(w);
      });
    },
    /**
     * Resolves once every timer the runtime has set so far has run (or was
     * cleared), and what they started in promises has settled: a fence for
     * "nothing was posted", in place of a wait.
     */
    async afterTimers() {
      await Promise.all([...timers.values()].map((t) => t.ran));
      await new Promise((r) => setImmediate(r));
    },
    /** Frames of this type posted so far. */
    sent: (type) => posted.filter((f) => f.type === type),
    /** Sets the document height and notifies the ResizeObservers. */
    resize(h) {
      height = h;
      observers.forEach((o) => o.cb([{ target: o.el }]));
    },
    observers,
  };
  return env;
}

/** A valid host-ready frame; fields override. */
export const hostReady = (fields = {}) => ({
  v: 1,
  type: "snug:host-ready",
  instanceId: "i1",
  protocolVersions: [1],
  capabilities: { streaming: true, db: true, auth: false, net: true, openUrl: true },
  theme: { mode: "light", tokens: { "--snug-bg": "#fff" } },
  locale: "en-US",
  ...fields,
});

/** Runs the normal handshake: DOM ready, announce, host-ready ack; returns the env. */
export async function connected(opts = {}, ready = {}) {
  const env = createEnv({ meta: { "app-id": "test.app", "display-name": "Test" }, ...opts });
  env.domReady();
  await env.next("snug:app-announce");
  await env.send(hostReady(ready));
  await env.snug.ready;
  return env;
}

export { tick };
