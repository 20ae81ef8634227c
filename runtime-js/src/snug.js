// The Snug app runtime's API layer: the one global, `snug`, that a
// micro-app talks through, shared by every flavour of the runtime. It speaks
// Snug frames; a transport carries them (install's argument): transport-snug.js
// posts them to a Snug host as they are, transport-mcp.js translates them to
// MCP Apps JSON-RPC. The transport checks what arrives before receive() sees
// it; nothing about a frame is restated here by hand (../gen, from schemas/).
//
// Limits: one runtime per document; requests wait for the handshake
// (announce sent, then host-ready received) before they go out.

import {
  BODY_ENCODING_BASE64,
  CODE_CANCELLED,
  CODE_CAPABILITY_ABSENT,
  CODE_HOST_ERROR,
  CODE_MALFORMED,
  EVENT_RESIZE,
  EVENT_THEME_CHANGE,
  METHOD_GET,
  OP_EXEC,
  OP_EXPORT,
  OP_IMPORT,
  OP_KV_GET,
  OP_KV_SET,
  PROTOCOL_VERSIONS,
  RESIZE_HEIGHT_MAXIMUM,
  STRIP_HEADERS,
  TYPE_APP_ANNOUNCE,
  TYPE_APP_CANCEL,
  TYPE_APP_EVENT,
  TYPE_APP_MESSAGE,
  TYPE_APP_RESPONSE,
  TYPE_DB_REQUEST,
  TYPE_DB_RESPONSE,
  TYPE_HOST_EVENT,
  TYPE_HOST_READY,
  TYPE_NET_REQUEST,
  TYPE_NET_RESPONSE,
  TYPE_OPEN_URL_REQUEST,
  TYPE_OPEN_URL_RESULT,
  TYPE_SAVE_FILE_REQUEST,
  TYPE_SAVE_FILE_RESULT,
  STATUS_REFUSED,
  VERSION,
  MAX_BYTES_APP_ANNOUNCE,
  MAX_BYTES_APP_CANCEL,
  MAX_BYTES_APP_EVENT,
  MAX_BYTES_APP_MESSAGE,
  MAX_BYTES_DB_REQUEST,
  MAX_BYTES_NET_REQUEST,
  MAX_BYTES_OPEN_URL_REQUEST,
  MAX_BYTES_SAVE_FILE_REQUEST,
} from "../gen/constants.mjs";
import { fromBase64, toBase64 } from "./bytes.js";
export { downloads, links } from "./links.js";
import { absoluteURL } from "./url.js";

/**
 * An error from the host or from the runtime, with the spec's fields. The
 * transport has applied R5 (an unknown code renders as HOST_ERROR, keeping its
 * retryable flag, and hostCode keeps the code as sent).
 */
export class SnugError extends Error {
  constructor(e) {
    super(e.message);
    Object.assign(this, { hostCode: e.code }, e, { name: "SnugError" });
  }
}

const D = document;
const root = D.documentElement;
const pending = new Map(); // requestId -> the function that takes its answers
const listeners = {}; // event -> Set of functions
let lastId = 0;
let app; // the announced identity; undefined until announced
let host; // the latest host-ready's fields, one object updated in place
let resolveReady;
let tokens = [];
let height;
let resizeTimer;
let send; // the transport's: takes one app→host frame
let known; // the transport's registry (R5) for a refusal's code, if it has one

const ready = new Promise((r) => (resolveReady = r));

// post sends one frame to the host. The JSON round trip drops undefined
// fields and anything that is not JSON, so the host sees exactly the wire form.
// A frame past its size class max (R6, the type's MAX_BYTES_ constant: a
// runtime without a member carries no class of its frames) would only be
// refused on the way: post throws instead, naming the limit, and sends nothing.
const post = (type, max, fields, text = JSON.stringify({ v: VERSION, type, ...fields }), n = new Blob([text]).size) => {
  if (n > max) throw refusal(CODE_MALFORMED, `${type} is ${n} bytes, past its size class of ${max} bytes`);
  send(JSON.parse(text));
};

const fire = (event, data) => listeners[event]?.forEach((fn) => fn(data));

// refusal is the runtime's own error: never retryable; the code is the
// message unless one is given.
const refusal = (code, message = code) => new SnugError({ code, retryable: false, message });

// applyTheme sets data-theme and the theme's tokens as custom properties:
// only names starting with -- (a host that sent "color" or "background-image"
// would otherwise restyle the page itself).
const applyTheme = (theme) => {
  root.dataset.theme = theme.mode;
  for (const name of tokens) root.style.removeProperty(name);
  tokens = Object.keys(theme.tokens || {}).filter((name) => name.startsWith("--"));
  for (const name of tokens) root.style.setProperty(name, theme.tokens[name]);
};

/**
 * Sends snug:app-announce: the fields given, else the page's
 * <meta name="snug:…"> tags. Called on its own once the document is parsed;
 * calling it again re-announces (the host supersedes in-flight work, R4).
 */
const announce = (a = {}) => {
  app = {};
  // Each field from the argument, else from <meta name="snug:kebab-name">.
  for (const k of ["appId", "displayName", "description", "iconEmoji", "iconColor"])
    app[k] = a[k] || D.querySelector(`meta[name="snug:${k.replace(/[A-Z]/g, "-$&").toLowerCase()}"]`)?.content;
  app.appId ||= "app";
  app.displayName ||= D.title || app.appId;
  post(TYPE_APP_ANNOUNCE, MAX_BYTES_APP_ANNOUNCE, { ...app, protocolVersions: PROTOCOL_VERSIONS });
};

// request sends one request frame of size class max and settles with its
// terminal answer of type `expect`. cap names a capability the host must
// advertise; the last argument is the caller's options (signal, onText).
// Only the members db, net, openUrl and saveFile name one: a runtime built
// without them (SNUG_<MEMBER> false, gen/js bundle.go) carries no check.
const request = async (type, max, expect, fields, cap, { signal, onText } = {}) => {
  const info = await ready;
  if ((SNUG_DB || SNUG_NET || SNUG_OPEN_URL || SNUG_SAVE_FILE) && cap && !info.capabilities[cap])
    throw refusal(CODE_CAPABILITY_ABSENT, `this host does not offer "${cap}"`);
  // ask, the one member that names no capability, sends app-message.
  if (!cap) fields.appId = app.appId;
  const ids = { requestId: "r" + ++lastId, instanceId: info.instanceId };
  return new Promise((resolve, reject) => {
    const cancelled = () => reject(refusal(CODE_CANCELLED));
    const done = () => {
      signal?.removeEventListener("abort", abort);
      pending.delete(ids.requestId);
    };
    const abort = () => {
      done();
      post(TYPE_APP_CANCEL, MAX_BYTES_APP_CANCEL, ids);
      cancelled();
    };
    if (signal?.aborted) return cancelled();
    // A frame post refuses rejects the promise with nothing left waiting.
    post(type, max, { ...ids, ...fields });
    signal?.addEventListener("abort", abort);
    // Only answers of the expected type count: streaming text, then the end.
    // Any ok:false is the end (R3), whatever else the frame says. A frame
    // without a type is the transport's own failure of this request.
    pending.set(ids.requestId, (f) =>
      f.type && f.type != expect ? 0
      : f.ok === false ? (done(), reject(new SnugError(f.error)))
      : f.streaming ? onText?.(f.text)
      : (done(), resolve(f)),
    );
  });
};

// settled is the status of an answer that refuses by status (open-url,
// save-file): a refusal rejects with a SnugError. Its reason is
// "CODE: message" when it has a code (rules.json refusal): the error has
// that code when the transport knows it (known, the Snug transport's
// registry, R5; an MCP server renders codes this runtime may not know as
// HOST_ERROR itself), else HOST_ERROR, and reason keeps the text as sent.
const settled = (f, [, code, message] = /^(?:([A-Z_]+): )?([^]*)/.exec(f.reason || "")) => {
  if (f.status != STATUS_REFUSED) return f.status;
  throw Object.assign(refusal(code && (known?.(code) ?? 1) ? code : CODE_HOST_ERROR, message || "refused by the host"), { hostCode: code, reason: f.reason });
};

const dbOp = (op, fields) => request(TYPE_DB_REQUEST, MAX_BYTES_DB_REQUEST, TYPE_DB_RESPONSE, { op, ...fields }, "db").then((f) => f.result);

const emit = (event, data) => ready.then((info) => post(TYPE_APP_EVENT, MAX_BYTES_APP_EVENT, { instanceId: info.instanceId, event, data }));

// response is the Response-like answer of net.fetch; each read decodes the
// body afresh, so it can be read more than once.
const response = (f) => {
  const body = () => new Response(f.bodyEncoding == BODY_ENCODING_BASE64 ? fromBase64(f.body) : f.body);
  return {
    ok: f.status > 199 && f.status < 300,
    status: f.status,
    headers: new Headers(f.headers),
    truncated: !!f.truncated,
    text: () => body().text(),
    json: () => body().json(),
    arrayBuffer: () => body().arrayBuffer(),
  };
};

// receive takes one host→app frame from the transport, already checked.
const receive = (f) => {
  if (f.type == TYPE_HOST_READY) {
    // One object, updated in place: what snug.ready resolved with stays current.
    host = Object.assign(host || {}, f);
    applyTheme(f.theme);
    // host-ready before our announce is the load-time greeting; the ack of
    // the announce follows, and requests wait for it.
    if (app) resolveReady(host);
    fire(TYPE_HOST_READY, host);
  } else if (f.type == TYPE_HOST_EVENT) {
    // theme-change's data.theme: the transport left it only when valid.
    const theme = f.data?.theme;
    if (f.event == EVENT_THEME_CHANGE && theme) {
      applyTheme(theme);
      if (host) host.theme = theme;
    }
    fire(f.event, f.data);
  } else pending.get(f.requestId)?.(f);
};

/**
 * Wires the runtime to a transport: connect(receive) starts it and returns
 * the function that sends one app→host frame. members are the capability
 * members the global gets (ask, db, net, openUrl, saveFile): each a separate
 * export, so that a build injecting only what an app uses drops the others.
 * The parts that come with a member are exports the entry applies itself:
 * onPartial wraps ask (the reader behind its onPartial option), links(snug)
 * routes link clicks and window.open to openUrl, downloads(snug) an
 * <a download> to saveFile. Returns the `snug` global.
 */
export const install = (connect, members) => ((send = connect(receive)), Object.assign(snug, members));

// knownCodes hands the transport's registry to settled: the Snug entries
// with openUrl or saveFile call it (an MCP server renders codes itself, and
// a runtime without those members carries neither the call nor the hook).
export const knownCodes = (registry) => (known = registry);

/**
 * The global the build injects; see snug.d.ts for the documented API. The
 * capability members are the exports below, added by install.
 */
const snug = {
  ready,
  announce,
  SnugError,
  get capabilities() {
    return host?.capabilities;
  },
  on: (event, fn) => ((listeners[event] ||= new Set()).add(fn), () => snug.off(event, fn)),
  off: (event, fn) => listeners[event]?.delete(fn),
  emit,
};

// The capability members: separate exports, so that a bundle keeps only those
// its entry passes to install (see snuggen build's tree-shaken runtime).
export const ask = (action, payload, o = {}) =>
  request(
    TYPE_APP_MESSAGE,
    MAX_BYTES_APP_MESSAGE,
    TYPE_APP_RESPONSE,
    { action, payload, state: o.state, responseSchema: o.schema },
    0,
    o,
  ).then((f) => f.data);
export const db = {
  exec: (sql, params) => dbOp(OP_EXEC, { sql, params }),
  query: (sql, params) =>
    dbOp(OP_EXEC, { sql, params }).then((r) =>
      r.rows.map((row) => Object.fromEntries(r.columns.map((c, i) => [c, row[i]]))),
    ),
  get: (key) => dbOp(OP_KV_GET, { key }).then((r) => (r.found ? r.value : null)),
  set: (key, value) => dbOp(OP_KV_SET, { key, value: value ?? null }).then(() => {}),
  export: () => dbOp(OP_EXPORT).then((r) => fromBase64(r.data)),
  import: (bytes) => dbOp(OP_IMPORT, { data: toBase64(bytes) }),
};
export const net = {
  async fetch(url, o = {}) {
    const headers = new Headers(o.headers);
    for (const [name] of headers)
      if (STRIP_HEADERS.includes(name)) throw refusal(CODE_MALFORMED, `header "${name}" refused: the host injects credentials`);
    return response(
      await request(
        TYPE_NET_REQUEST,
        MAX_BYTES_NET_REQUEST,
        TYPE_NET_RESPONSE,
        {
          url: absoluteURL(url, refusal),
          method: (o.method || METHOD_GET).toUpperCase(),
          headers: [...headers].length ? Object.fromEntries(headers) : undefined,
          body: o.body,
        },
        "net",
        o,
      ),
    );
  },
};
// openUrl comes with links (links.js: link clicks and window.open go to
// it), so a build keeps it for an app that names openUrl or may show a link
// (pack/shake.go has the rule).
export const openUrl = async (url) => settled(await request(TYPE_OPEN_URL_REQUEST, MAX_BYTES_OPEN_URL_REQUEST, TYPE_OPEN_URL_RESULT, { url: absoluteURL(url, refusal) }, "openUrl"));
// saveFile: a file to the user (the host asks them); an <a download> with
// a blob: or data: URL comes here too (links.js), so a build keeps it for an
// app that names saveFile or download.
export const saveFile = async (name, data, mimeType) =>
  settled(
    await request(
      TYPE_SAVE_FILE_REQUEST,
      MAX_BYTES_SAVE_FILE_REQUEST,
      TYPE_SAVE_FILE_RESULT,
      // A file past the limit is refused by the host (the frame's data
      // maxLength), or before it is sent when its frame is past the size class.
      { name: String(name), mimeType: mimeType || data.type || undefined, data: toBase64(await new Blob([data]).arrayBuffer()) },
      "saveFile",
    ),
  );
export { onPartial } from "./partial.js";

// What runs when the runtime loads comes last, after every declaration
// (a bundle then joins them into one).
const auto = () => app || announce();
// The height, reported as resize app-events (sent once the handshake is
// done): debounced, and only when it changed.
new ResizeObserver(() => {
  clearTimeout(resizeTimer);
  resizeTimer = setTimeout(() => {
    const h = Math.min(RESIZE_HEIGHT_MAXIMUM, Math.ceil(root.getBoundingClientRect().height));
    if (h != height) emit(EVENT_RESIZE, { height: (height = h) });
  }, 60);
}).observe(root);
if (D.readyState == "loading") addEventListener("DOMContentLoaded", auto);
else setTimeout(auto);
