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
// ui/resource-teardown is the visibility host-event {visible: false}, then,
// in a runtime that can save (db, net), its answer waits for the tool
// calls in flight (about 5 s at most), so that what the app saves as it
// goes lands before the host removes it.
// db requests go one at a time, the next once the last is answered: a host
// forwards each tools/call as it likes (AppBridge over HTTP: a request
// each, in any order), and only one out keeps them taking effect in the
// order the app made them (issue 26.1).

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
  TYPE_DB_REQUEST,
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

// The db requests' lane: the db-request frames waiting for the one out, the
// requestId of the one out (undefined when none is), and dbNext, which
// sends the next through request. Module state, as connect runs once per
// document; every use is behind SNUG_DB, so a runtime without db carries
// none of it.
const dbWaiting = [];
let dbOut;
const dbNext = (request) => {
  const next = dbWaiting.shift();
  dbOut = next?.requestId;
  if (next) request(next);
};

/**
 * connect(receive) starts the transport and returns the function that sends
 * one frame. The parts only some members use are dropped from a runtime
 * built without them (SNUG_<MEMBER> false, gen/js bundle.go): ui/open-link
 * (open, below) with net's grant pages and openUrl, ui/download-file (save)
 * with saveFile, the db lane with db; the teardown waits only in a runtime
 * that can save (db, net).
 * @param {(frame: object) => void} receive
 * @returns {(frame: object) => void}
 */
export const connect = (receive) => {
  const calls = {}; // JSON-RPC id -> (result, error) => void; Snug requestId -> JSON-RPC id
  let lastId = 0; // the last JSON-RPC id; 0 until the handshake starts
  let busy = 0; // tools/call in flight
  let host; // the host's capabilities, once ui/initialize was answered
  let session; // the open tool's _meta["snug/session"]; null when the result had none
  let context = {}; // hostContext, partial updates merged in

  const post = (message) => parent.postMessage({ jsonrpc: "2.0", ...message }, "*");
  // call sends a JSON-RPC request; onAnswer hears its result or error.
  // Returns its id.
  const call = (method, params, onAnswer) => {
    lastId++;
    calls[lastId] = onAnswer;
    post({ id: lastId, method, params });
    return lastId;
  };
  const tools = () => (host.serverTools && session?.tools) || {};
  const theme = () => ({ mode: context.theme == MODE_DARK ? MODE_DARK : MODE_LIGHT, tokens: context.styles?.variables });
  // ready gives the API layer host-ready once the host and the session are
  // known. Without serverTools no session is needed (nothing can use it):
  // ready does not wait for a tool result such a host may never send.
  const ready = () => {
    if (!host || (session === undefined && host.serverTools)) return;
    const partTool = tools().part;
    receive({
      type: TYPE_HOST_READY,
      instanceId: session?.instanceId || "-",
      protocolVersions: PROTOCOL_VERSIONS,
      capabilities: {
        db: false,
        auth: false,
        net: false,
        ...(partTool && session.capabilities),
        streaming: false,
        openUrl: !!(partTool && host.openLinks),
        saveFile: !!host.downloadFile,
      },
      theme: theme(),
      locale: context.locale,
    });
  };
  // request calls the app-only tool of frame's type; every way it ends
  // answers the frame exactly once (a frame without a type is this
  // request's failure), and the end of the db-request out lets the next go.
  const request = (frame) => {
    let text = ""; // the answer's parts so far
    const end = (answer) => {
      receive(answer);
      if (SNUG_DB && frame.requestId == dbOut) dbNext(request);
    };
    // The host side failed (the tool, the call): HOST_ERROR, retryable as
    // the registry has it (R5); an absent tool is CAPABILITY_ABSENT.
    const fail = (message, code = CODE_HOST_ERROR) => {
      end({ requestId: frame.requestId, ok: false, error: { code, message, retryable: code == CODE_HOST_ERROR } });
    };
    const answered = (result, error) => {
      busy--;
      if (error || result.isError) return fail(error?.message || result.content?.[0]?.text);
      let answer = result.structuredContent || {};
      text += answer.part || "";
      if (answer.next) return tool(tools().part, { transfer: answer.next });
      if (SNUG_NET && host.openLinks) {
        const grant = result._meta?.["snug/grant"];
        if (grant) open(call, grant, () => {});
      }
      // A refusal's reason ("CODE: message") is read by the API layer.
      if (text) answer = JSON.parse(text);
      if (SNUG_OPEN_URL && answer.type == TYPE_OPEN_URL_RESULT && answer.status == STATUS_OPENED) {
        open(call, frame.url, (outcome) => receive({ ...answer, ...outcome }));
      } else {
        end(answer);
      }
    };
    const tool = (name, args) => {
      if (!name) {
        // After the API layer's pending.set.
        queueMicrotask(() => fail("this host does not offer " + frame.type, CODE_CAPABILITY_ABSENT));
        return;
      }
      busy++;
      calls[frame.requestId] = call("tools/call", { name, arguments: { handle: session.handle, ...args } }, answered);
    };
    tool(tools()[frame.type], { frame });
  };

  // answerRequest answers a request from the host. A ping is answered at
  // once. ui/resource-teardown: the app hears it is going and saves what it
  // has; in a runtime that can save (db, net), the answer waits for those
  // calls (and any in flight) to be answered, TEARDOWN_STEPS x 20 ms at most.
  const answerRequest = (id, method) => {
    const answer = (stepsLeft) => {
      const saving = (SNUG_DB || SNUG_NET) && (busy || (SNUG_DB && dbWaiting.length));
      if (saving && stepsLeft) setTimeout(answer, 20, stepsLeft - 1);
      else post({ id, result: {} });
    };
    if (/teardown$/.test(method)) {
      receive({ type: TYPE_HOST_EVENT, event: EVENT_VISIBILITY, data: { visible: false } });
      setTimeout(answer, 0, TEARDOWN_STEPS); // after the listeners' requests are sent
    } else {
      answer(0);
    }
  };

  // cancel drops a db-request still waiting (never sent: nothing to tell
  // the host); a request out is cancelled on the host, and the db-request
  // out lets the next go.
  const cancel = (requestId) => {
    const waiting = SNUG_DB ? dbWaiting.findIndex((frame) => frame.requestId == requestId) : -1;
    if (waiting >= 0) {
      dbWaiting.splice(waiting, 1);
      return;
    }
    post({ method: "notifications/cancelled", params: { requestId: calls[requestId] } });
    if (SNUG_DB && requestId == dbOut) dbNext(request);
  };

  const initialize = (frame) => {
    const params = { appInfo: { name: frame.appId, version: "1" }, appCapabilities: {}, protocolVersion: "2026-01-26" };
    call("ui/initialize", params, (result) => {
      host = result?.hostCapabilities || {};
      context = result?.hostContext || {};
      post({ method: "ui/notifications/initialized" });
      ready();
    });
  };

  addEventListener("message", (event) => {
    const message = event.data;
    const params = message?.params || {};
    const method = message?.method;
    if (event.source != parent || message?.jsonrpc != "2.0") return;
    if (!method) {
      calls[message.id]?.(message.result, message.error);
      delete calls[message.id];
    } else if (/tool-(result|cancelled)$/.test(method)) {
      session = params._meta?.["snug/session"] || session || null;
      ready();
    } else if (/host-context-changed$/.test(method)) {
      context = { ...context, ...params };
      if (host && (params.theme || params.styles)) {
        receive({ type: TYPE_HOST_EVENT, event: EVENT_THEME_CHANGE, data: { theme: theme() } });
      }
    } else if (message.id != null) {
      answerRequest(message.id, method);
    }
  });

  return (frame) => {
    if (frame.type == TYPE_APP_ANNOUNCE) {
      // The first announce starts the handshake; a later one gets
      // host-ready again, as from a Snug host.
      if (lastId) ready();
      else initialize(frame);
    } else if (frame.type == TYPE_APP_CANCEL) {
      cancel(frame.requestId);
    } else if (frame.type == TYPE_APP_EVENT) {
      if (frame.event == EVENT_RESIZE) post({ method: "ui/notifications/size-changed", params: frame.data });
    } else if (SNUG_SAVE_FILE && frame.type == TYPE_SAVE_FILE_REQUEST) {
      calls[frame.requestId] = save(call, receive, frame);
    } else if (SNUG_DB && frame.type == TYPE_DB_REQUEST) {
      dbWaiting.push(frame);
      if (dbOut === undefined) dbNext(request);
    } else {
      request(frame);
    }
  };
};

// open asks the host to open a URL the server passed (a net grant page, an
// open-url the server checked); its answer decides: onOutcome hears {} when
// opened, else the status and reason of a declined or refused result.
const open = (call, url, onOutcome) =>
  call("ui/open-link", { url }, (result, error) => {
    if (!error && !result?.isError) return onOutcome({});
    const declined = /deni|declin/i.test(error?.message);
    onOutcome({ status: declined ? STATUS_DECLINED : STATUS_REFUSED, reason: error?.message });
  });

// save asks the host to download a save-file request's file
// (ui/download-file, advertised as hostCapabilities.downloadFile): the host
// asks the user. A result marked isError without an error is the user's no.
const save = (call, receive, frame) => {
  const resource = { uri: "file:///" + encodeURIComponent(frame.name), mimeType: frame.mimeType, blob: frame.data };
  return call("ui/download-file", { contents: [{ type: "resource", resource }] }, (result, error) => {
    let outcome = { status: STATUS_SAVED };
    if (error || result?.isError) {
      const declined = !error || /deni|declin|cancel/i.test(error.message);
      outcome = { status: declined ? STATUS_DECLINED : STATUS_REFUSED, reason: error?.message };
    }
    receive({ type: TYPE_SAVE_FILE_RESULT, requestId: frame.requestId, ...outcome });
  });
};
