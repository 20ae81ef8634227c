// The MCP Apps transport: the API layer's Snug frames carried as MCP Apps
// JSON-RPC over postMessage to the host (window.parent), for an app served
// by `snuggen mcp` (hostkit/mcpapps). Trust: only window.parent, by
// event.source.
//
// The handshake is ui/initialize, then ui/notifications/initialized.
// host-ready is made here from the host's answer (hostCapabilities,
// hostContext) and from the open tool's result, whose _meta["snug/session"]
// the server wrote: the signed handle, the instanceId, the server's
// capabilities and the names of its app-only tools. db, net and ask need
// the host's serverTools, openUrl also its openLinks. A request is a
// tools/call of its frame type's tool with the frame as argument; the
// terminal frame comes back as structuredContent, or, too large for one
// result, as parts fetched with the part tool. The server checks every frame
// as a Snug host does and renders codes this runtime may not know as
// HOST_ERROR (R5). open-url: the server checks the URL as a Snug host does,
// then ui/open-link lets the host ask the user. Cancel is
// notifications/cancelled, resize is ui/notifications/size-changed,
// theme-change comes from ui/notifications/host-context-changed.
// ui/resource-teardown is the visibility host-event {visible: false}, then
// its answer waits for the tool calls in flight (about 5 s at most), so
// that what the app saves as it goes lands before the host removes it.

import {
  CODE_CAPABILITY_ABSENT,
  CODE_HOST_ERROR,
  EVENT_RESIZE,
  EVENT_THEME_CHANGE,
  EVENT_VISIBILITY,
  MODE_DARK,
  MODE_LIGHT,
  PROTOCOL_VERSIONS,
  STATUS_DECLINED,
  STATUS_OPENED,
  STATUS_REFUSED,
  TYPE_APP_ANNOUNCE,
  TYPE_APP_CANCEL,
  TYPE_APP_EVENT,
  TYPE_HOST_EVENT,
  TYPE_HOST_READY,
  TYPE_OPEN_URL_RESULT,
  TYPE_SAVE_FILE_REQUEST,
  TYPE_SAVE_FILE_RESULT,
  STATUS_SAVED,
} from "../gen/constants.mjs";

// TEARDOWN_STEPS bounds how long ui/resource-teardown's answer waits for
// the app's tool calls in flight, in steps of 20 ms (about 5 s; a call the
// app cancelled and the host never answers counts until then).
const TEARDOWN_STEPS = 250;

/**
 * connect(receive) starts the transport and returns the function that sends
 * one frame. The parts only some members use are dropped from a runtime
 * built without them (SNUG_<MEMBER> false, gen/js bundle.go): ui/open-link
 * (open, below) with net's grant pages and openUrl, ui/download-file (save)
 * with saveFile.
 * @param {(frame: object) => void} receive
 * @returns {(frame: object) => void}
 */
export const connect = (receive) => {
  const calls = {}; // JSON-RPC id -> (result, error) => void; Snug requestId -> JSON-RPC id
  let id = 0;
  let busy = 0; // tools/call in flight
  let host; // the host's capabilities, once ui/initialize was answered
  let session; // the open tool's _meta["snug/session"]; null when the result had none
  let ctx = {}; // hostContext, partial updates merged in

  const post = (m) => parent.postMessage({ jsonrpc: "2.0", ...m }, "*");
  const call = (method, params, fn) => ((calls[++id] = fn), post({ id, method, params }), id);
  const tools = () => (host.serverTools && session?.tools) || {};
  const theme = () => ({ mode: ctx.theme == MODE_DARK ? MODE_DARK : MODE_LIGHT, tokens: ctx.styles?.variables });
  // Without serverTools no session is needed (nothing can use it): ready
  // does not wait for a tool result such a host may never send.
  const ready = () =>
    host &&
    (session !== undefined || !host.serverTools) &&
    receive({
      type: TYPE_HOST_READY,
      instanceId: session?.instanceId || "-",
      protocolVersions: PROTOCOL_VERSIONS,
      capabilities: {
        db: false,
        auth: false,
        net: false,
        ...(tools().part && session.capabilities),
        streaming: false,
        openUrl: !!(tools().part && host.openLinks),
        saveFile: !!host.downloadFile,
      },
      theme: theme(),
      locale: ctx.locale,
    });
  // request calls the app-only tool of f's type; every way it ends answers f
  // exactly once (a frame without a type is this request's failure).
  const request = (f, name = tools()[f.type], text = "") => {
    // The host side failed (the tool, the call): HOST_ERROR, retryable as
    // the registry has it (R5).
    const fail = (message, code = CODE_HOST_ERROR) => receive({ requestId: f.requestId, ok: false, error: { code, message, retryable: code == CODE_HOST_ERROR } });
    const tool = (name, args) => {
      if (!name) {
        queueMicrotask(() => fail("this host does not offer " + f.type, CODE_CAPABILITY_ABSENT)); // after the API layer's pending.set
        return;
      }
      busy++;
      calls[f.requestId] = call("tools/call", { name, arguments: { handle: session.handle, ...args } }, (r, e) => {
        busy--;
        if (e || r.isError) return fail(e?.message || r.content?.[0]?.text);
        let a = r.structuredContent || {};
        text += a.part || "";
        if (a.next) return tool(tools().part, { transfer: a.next });
        if (SNUG_NET && host.openLinks && r._meta?.["snug/grant"]) open(call, r._meta["snug/grant"], () => 0);
        // A refusal's reason ("CODE: message") is read by the API layer.
        a = text ? JSON.parse(text) : a;
        SNUG_OPEN_URL && a.type == TYPE_OPEN_URL_RESULT && a.status == STATUS_OPENED ? open(call, f.url, (o) => receive({ ...a, ...o })) : receive(a);
      });
    };
    tool(name, { frame: f });
  };

  addEventListener("message", (e) => {
    const m = e.data;
    const p = m?.params || {};
    const method = m?.method;
    if (e.source != parent || m?.jsonrpc != "2.0") return;
    if (!method) calls[m.id]?.(m.result, m.error), delete calls[m.id];
    else if (/tool-(result|cancelled)$/.test(method)) (session = p._meta?.["snug/session"] || session || null), ready();
    else if (/host-context-changed$/.test(method)) {
      ctx = { ...ctx, ...p };
      if (host && (p.theme || p.styles)) receive({ type: TYPE_HOST_EVENT, event: EVENT_THEME_CHANGE, data: { theme: theme() } });
    } else if (m.id != null) {
      // A ping is answered at once. ui/resource-teardown: the app hears it
      // is going and saves what it has; the answer waits for those calls
      // (and any in flight) to be answered, TEARDOWN_STEPS x 20 ms at most.
      const answer = (stepsLeft) => {
        if (busy && stepsLeft) setTimeout(answer, 20, stepsLeft - 1);
        else post({ id: m.id, result: {} });
      };
      if (/teardown$/.test(method)) {
        receive({ type: TYPE_HOST_EVENT, event: EVENT_VISIBILITY, data: { visible: false } });
        setTimeout(answer, 0, TEARDOWN_STEPS); // after the listeners' requests are sent
      } else answer(0);
    }
  });

  return (f) =>
    f.type == TYPE_APP_ANNOUNCE
      ? // The first announce starts the handshake; a later one gets
        // host-ready again, as from a Snug host.
        id
        ? ready()
        : call("ui/initialize", { appInfo: { name: f.appId, version: "1" }, appCapabilities: {}, protocolVersion: "2026-01-26" }, (r) => {
            host = r?.hostCapabilities || {};
            ctx = r?.hostContext || {};
            post({ method: "ui/notifications/initialized" });
            ready();
          })
      : f.type == TYPE_APP_CANCEL
        ? post({ method: "notifications/cancelled", params: { requestId: calls[f.requestId] } })
        : f.type == TYPE_APP_EVENT
          ? f.event == EVENT_RESIZE && post({ method: "ui/notifications/size-changed", params: f.data })
          : SNUG_SAVE_FILE && f.type == TYPE_SAVE_FILE_REQUEST
            ? (calls[f.requestId] = save(call, receive, f))
            : request(f);
};

// open asks the host to open a URL the server passed (a net grant page, an
// open-url the server checked); its answer decides.
const open = (call, url, fn) =>
  call("ui/open-link", { url }, (r, e) =>
    fn(e || r?.isError ? { status: /deni|declin/i.test(e?.message) ? STATUS_DECLINED : STATUS_REFUSED, reason: e?.message } : {}),
  );

// save asks the host to download a save-file request's file
// (ui/download-file, advertised as hostCapabilities.downloadFile): the host
// asks the user.
const save = (call, receive, f) =>
  call(
    "ui/download-file",
    { contents: [{ type: "resource", resource: { uri: "file:///" + encodeURIComponent(f.name), mimeType: f.mimeType, blob: f.data } }] },
    (r, e) =>
      receive({
        type: TYPE_SAVE_FILE_RESULT,
        requestId: f.requestId,
        ...(e || r?.isError ? { status: /deni|declin|cancel/i.test(e?.message) || !e ? STATUS_DECLINED : STATUS_REFUSED, reason: e?.message } : { status: STATUS_SAVED }),
      }),
  );
