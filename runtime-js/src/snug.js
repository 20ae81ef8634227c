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
  INSTANCE_MAX_IN_FLIGHT,
  METHOD_GET,
  OP_EXEC,
  OP_SCRIPT,
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
  constructor(error) {
    super(error.message);
    Object.assign(this, { hostCode: error.code }, error, { name: "SnugError" });
  }
}

const root = document.documentElement;
const pending = new Map(); // requestId -> the function that takes its answers
const listeners = {}; // event -> Set of functions
let lastId = 0;
let app; // the announced identity; undefined until announced
let host; // the latest host-ready's fields, one object updated in place
let resolveReady;
let tokens = []; // the theme's custom properties set on the root
let height; // the height last reported
let resizeTimer;
let send; // the transport's: takes one app→host frame
let known; // the transport's registry (R5) for a refusal's code, if it has one

const ready = new Promise((resolve) => {
  resolveReady = resolve;
});

// refusal is the runtime's own error: never retryable; the code is the
// message unless one is given.
const refusal = (code, message = code) => new SnugError({ code, retryable: false, message });

// wire makes one frame as the host will see it: the JSON round trip drops
// undefined fields and anything that is not JSON, and takes the values as
// they are now. A frame past its size class max (R6, the type's MAX_BYTES_
// constant: a runtime without a member carries no class of its frames)
// would only be refused on the way: wire throws instead, naming the limit.
const wire = (type, max, fields) => {
  const text = JSON.stringify({ v: VERSION, type, ...fields });
  const size = new Blob([text]).size;
  if (size > max) throw refusal(CODE_MALFORMED, `${type} is ${size} bytes, past its size class of ${max} bytes`);
  return JSON.parse(text);
};

// post sends one frame to the host now.
const post = (type, max, fields) => send(wire(type, max, fields));

// The window: at most INSTANCE_MAX_IN_FLIGHT requests are sent and not yet
// ended, the host's limit, so an app that fires saves without awaiting them
// never meets its refusal. Requests beyond it wait in `queued`, in the order
// they were made, and go out in that order as answers end others (one
// page's frames reach the host in the order sent, and the host takes a
// request out of its count before its answer goes out).
const queued = [];
let sending = 0;
const flush = () => {
  while (sending < INSTANCE_MAX_IN_FLIGHT && queued.length) {
    sending++;
    send(queued.shift());
  }
};

const fire = (event, data) => listeners[event]?.forEach((listener) => listener(data));

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
const announce = (fields = {}) => {
  app = {};
  for (const field of ["appId", "displayName", "description", "iconEmoji", "iconColor"]) {
    // appId is read from <meta name="snug:app-id">.
    const metaName = "snug:" + field.replace(/[A-Z]/g, "-$&").toLowerCase();
    app[field] = fields[field] || document.querySelector(`meta[name="${metaName}"]`)?.content;
  }
  app.appId ||= "app";
  app.displayName ||= document.title || app.appId;
  post(TYPE_APP_ANNOUNCE, MAX_BYTES_APP_ANNOUNCE, { ...app, protocolVersions: PROTOCOL_VERSIONS });
};

// request sends one request frame of size class max and settles with its
// terminal answer of type `expect`. capability names one the host must
// advertise; the last argument is the caller's options (signal, onText).
// Only the members db, net, openUrl and saveFile name one: a runtime built
// without them (SNUG_<MEMBER> false, gen/js bundle.go) carries no check.
const request = async (type, max, expect, fields, capability, { signal, onText } = {}) => {
  const info = await ready;
  if ((SNUG_DB || SNUG_NET || SNUG_OPEN_URL || SNUG_SAVE_FILE) && capability && !info.capabilities[capability]) {
    throw refusal(CODE_CAPABILITY_ABSENT, `this host does not offer "${capability}"`);
  }
  // ask, the one member that names no capability, sends app-message.
  if (!capability) fields.appId = app.appId;
  const ids = { requestId: "r" + ++lastId, instanceId: info.instanceId };
  let outgoing; // the request's frame, in `queued` until it is sent
  return new Promise((resolve, reject) => {
    const cancelled = () => reject(refusal(CODE_CANCELLED));
    // done frees the request's place in the window, or in the queue.
    const done = () => {
      signal?.removeEventListener("abort", abort);
      pending.delete(ids.requestId);
      const waiting = queued.indexOf(outgoing);
      if (waiting < 0) sending--;
      else queued.splice(waiting, 1);
      flush();
    };
    // A request still queued was never sent: there is nothing to cancel on
    // the host. The cancel goes out before done lets the next request out.
    const abort = () => {
      if (!queued.includes(outgoing)) post(TYPE_APP_CANCEL, MAX_BYTES_APP_CANCEL, ids);
      done();
      cancelled();
    };
    if (signal?.aborted) return cancelled();
    // A frame wire refuses rejects the promise with nothing left waiting.
    outgoing = wire(type, max, { ...ids, ...fields });
    queued.push(outgoing);
    flush();
    signal?.addEventListener("abort", abort);
    // Only answers of the expected type count: streaming text, then the end.
    // Any ok:false is the end (R3), whatever else the frame says. A frame
    // without a type is the transport's own failure of this request.
    pending.set(ids.requestId, (frame) => {
      if (frame.type && frame.type != expect) return;
      if (frame.ok === false) {
        done();
        reject(new SnugError(frame.error));
      } else if (frame.streaming) {
        onText?.(frame.text);
      } else {
        done();
        resolve(frame);
      }
    });
  });
};

// settled is the status of an answer that refuses by status (open-url,
// save-file): a refusal rejects with a SnugError. Its reason is
// "CODE: message" when it has a code (rules.json refusal): the error has
// that code when the transport knows it (known, the Snug transport's
// registry, R5; an MCP server renders codes this runtime may not know as
// HOST_ERROR itself), else HOST_ERROR, and reason keeps the text as sent.
const settled = (frame) => {
  if (frame.status != STATUS_REFUSED) return frame.status;
  const [, code, message] = /^(?:([A-Z_]+): )?([^]*)/.exec(frame.reason || "");
  const knownCode = code && (known ? known(code) : true);
  const error = refusal(knownCode ? code : CODE_HOST_ERROR, message || "refused by the host");
  throw Object.assign(error, { hostCode: code, reason: frame.reason });
};

const dbOp = (op, fields) =>
  request(TYPE_DB_REQUEST, MAX_BYTES_DB_REQUEST, TYPE_DB_RESPONSE, { op, ...fields }, "db").then((answer) => answer.result);

const emit = (event, data) =>
  ready.then((info) => post(TYPE_APP_EVENT, MAX_BYTES_APP_EVENT, { instanceId: info.instanceId, event, data }));

// response is the Response-like answer of net.fetch; each read decodes the
// body afresh, so it can be read more than once.
const response = (frame) => {
  const body = () => new Response(frame.bodyEncoding == BODY_ENCODING_BASE64 ? fromBase64(frame.body) : frame.body);
  return {
    ok: frame.status >= 200 && frame.status < 300,
    status: frame.status,
    headers: new Headers(frame.headers),
    truncated: !!frame.truncated,
    text: () => body().text(),
    json: () => body().json(),
    arrayBuffer: () => body().arrayBuffer(),
  };
};

// receive takes one host→app frame from the transport, already checked.
const receive = (frame) => {
  if (frame.type == TYPE_HOST_READY) {
    // One object, updated in place: what snug.ready resolved with stays current.
    host = Object.assign(host || {}, frame);
    applyTheme(frame.theme);
    // host-ready before our announce is the load-time greeting; the ack of
    // the announce follows, and requests wait for it.
    if (app) resolveReady(host);
    fire(TYPE_HOST_READY, host);
  } else if (frame.type == TYPE_HOST_EVENT) {
    // theme-change's data.theme: the transport left it only when valid.
    const theme = frame.data?.theme;
    if (frame.event == EVENT_THEME_CHANGE && theme) {
      applyTheme(theme);
      if (host) host.theme = theme;
    }
    fire(frame.event, frame.data);
  } else {
    pending.get(frame.requestId)?.(frame);
  }
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
export const install = (connect, members) => {
  send = connect(receive);
  return Object.assign(snug, members);
};

// knownCodes hands the transport's registry to settled: the Snug entries
// with openUrl or saveFile call it (an MCP server renders codes itself, and
// a runtime without those members carries neither the call nor the hook).
export const knownCodes = (registry) => {
  known = registry;
};

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
  on(event, listener) {
    listeners[event] ||= new Set();
    listeners[event].add(listener);
    return () => snug.off(event, listener);
  },
  off: (event, listener) => listeners[event]?.delete(listener),
  emit,
};

// The capability members: separate exports, so that a bundle keeps only those
// its entry passes to install (see snuggen build's tree-shaken runtime).
export const ask = (action, payload, options = {}) => {
  const fields = { action, payload, state: options.state, responseSchema: options.schema };
  // No capability: every host takes app-message.
  return request(TYPE_APP_MESSAGE, MAX_BYTES_APP_MESSAGE, TYPE_APP_RESPONSE, fields, "", options).then((answer) => answer.data);
};

// rowObjects turns a db result's rows into objects keyed by column.
const rowObjects = (result) =>
  result.rows.map((row) => Object.fromEntries(result.columns.map((column, index) => [column, row[index]])));

export const db = {
  exec: (sql, params) => dbOp(OP_EXEC, { sql, params }),
  query: (sql, params) => dbOp(OP_EXEC, { sql, params }).then(rowObjects),
  script: (sql) => dbOp(OP_SCRIPT, { sql }),
  get: (key) => dbOp(OP_KV_GET, { key }).then((result) => (result.found ? result.value : null)),
  set: (key, value) => dbOp(OP_KV_SET, { key, value: value ?? null }).then(() => {}),
  export: () => dbOp(OP_EXPORT).then((result) => fromBase64(result.data)),
  import: (bytes) => dbOp(OP_IMPORT, { data: toBase64(bytes) }),
};

export const net = {
  async fetch(url, options = {}) {
    const headers = new Headers(options.headers);
    for (const [name] of headers) {
      if (STRIP_HEADERS.includes(name)) throw refusal(CODE_MALFORMED, `header "${name}" refused: the host injects credentials`);
    }
    const fields = {
      url: absoluteURL(url, refusal),
      method: (options.method || METHOD_GET).toUpperCase(),
      headers: [...headers].length ? Object.fromEntries(headers) : undefined,
      body: options.body,
    };
    return response(await request(TYPE_NET_REQUEST, MAX_BYTES_NET_REQUEST, TYPE_NET_RESPONSE, fields, "net", options));
  },
};

// openUrl comes with links (links.js: link clicks and window.open go to
// it), so a build keeps it for an app that names openUrl or may show a link
// (pack/shake.go has the rule).
export const openUrl = async (url) => {
  const fields = { url: absoluteURL(url, refusal) };
  return settled(await request(TYPE_OPEN_URL_REQUEST, MAX_BYTES_OPEN_URL_REQUEST, TYPE_OPEN_URL_RESULT, fields, "openUrl"));
};

// saveFile: a file to the user (the host asks them); an <a download> with
// a blob: or data: URL comes here too (links.js), so a build keeps it for an
// app that names saveFile or download.
export const saveFile = async (name, data, mimeType) => {
  // A file past the limit is refused by the host (the frame's data
  // maxLength), or before it is sent when its frame is past the size class.
  const fields = {
    name: String(name),
    mimeType: mimeType || data.type || undefined,
    data: toBase64(await new Blob([data]).arrayBuffer()),
  };
  return settled(await request(TYPE_SAVE_FILE_REQUEST, MAX_BYTES_SAVE_FILE_REQUEST, TYPE_SAVE_FILE_RESULT, fields, "saveFile"));
};
export { onPartial } from "./partial.js";

// What runs when the runtime loads comes last, after every declaration
// (a bundle then joins them into one).
const announceOnce = () => {
  if (!app) announce();
};
// The height, reported as resize app-events (sent once the handshake is
// done): debounced, and only when it changed.
const reportHeight = () => {
  const measured = Math.min(RESIZE_HEIGHT_MAXIMUM, Math.ceil(root.getBoundingClientRect().height));
  if (measured != height) {
    height = measured;
    emit(EVENT_RESIZE, { height });
  }
};
new ResizeObserver(() => {
  clearTimeout(resizeTimer);
  resizeTimer = setTimeout(reportHeight, 60);
}).observe(root);
if (document.readyState == "loading") addEventListener("DOMContentLoaded", announceOnce);
else setTimeout(announceOnce);
