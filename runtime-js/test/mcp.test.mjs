// The MCP flavour (dist/snug-mcp.js) against a scripted MCP Apps host:
// JSON-RPC over postMessage, the open tool's session, and every way a call
// can end settling it exactly once.

import assert from "node:assert/strict";
import { test } from "node:test";
import { createEnv, tick } from "./harness.mjs";

const SESSION = {
  handle: "h.sig",
  instanceId: "inst1",
  capabilities: { streaming: false, db: true, auth: false, net: true, openUrl: true },
  tools: { "snug:app-message": "t__ask", "snug:db-request": "t__db", "snug:net-request": "t__net", "snug:open-url-request": "t__open_url", part: "t__part" },
};

// until polls fn for up to 5 s (the resize report is debounced by a timer).
const until = async (what, fn) => {
  for (const end = Date.now() + 5000; Date.now() < end; ) {
    const v = fn();
    if (v) return v;
    await new Promise((r) => setTimeout(r, 5));
  }
  throw new Error("never: " + what);
};

// msg takes the next message the app posted with this method.
const msg = (env, method) => until(method, () => env.posted.find((m) => m.method === method && !m.taken && (m.taken = true)));

async function mcp({ host = { serverTools: {}, openLinks: {} }, session = SESSION, ctx, runtime = "snug-mcp.js" } = {}) {
  const env = createEnv({ runtime, meta: { "app-id": "test.app", "display-name": "Test" } });
  env.domReady();
  const init = await msg(env, "ui/initialize");
  assert.equal(init.jsonrpc, "2.0");
  assert.equal(init.params.appInfo.name, "test.app");
  env.reply = (m, result) => env.send({ jsonrpc: "2.0", id: m.id, result });
  env.fail = (m, message) => env.send({ jsonrpc: "2.0", id: m.id, error: { code: -32000, message } });
  await env.reply(init, {
    protocolVersion: "2026-01-26",
    hostCapabilities: host,
    hostContext: ctx ?? { theme: "dark", locale: "de-DE", styles: { variables: { "--color-text-primary": "#eee", color: "red" } } },
  });
  await msg(env, "ui/notifications/initialized");
  await env.send({ jsonrpc: "2.0", method: "ui/notifications/tool-result", params: { content: [], _meta: { "snug/session": session } } });
  await env.snug.ready;
  return env;
}

const outcome = async (p) => {
  try {
    return { value: await p };
  } catch (e) {
    return { code: e.code, message: e.message };
  }
};

test("handshake: capabilities from the host and the session, theme and locale from hostContext", async () => {
  const env = await mcp();
  const ready = await env.snug.ready;
  assert.equal(ready.instanceId, "inst1");
  assert.deepEqual({ ...ready.capabilities }, { streaming: false, db: true, auth: false, net: true, openUrl: true, saveFile: false });
  assert.equal(ready.locale, "de-DE");
  assert.equal(env.attrs["data-theme"], "dark");
  assert.equal(env.styles["--color-text-primary"], "#eee");
  assert.equal(env.styles.color, undefined, "only --* names are applied");
});

test("no serverTools: db, net and openUrl are off and an ask fails once with CAPABILITY_ABSENT", async () => {
  const env = await mcp({ host: { openLinks: {} } });
  const caps = env.snug.capabilities;
  assert.equal(caps.db || caps.net || caps.openUrl, false);
  for (const call of [() => env.snug.ask("x", {}), () => env.snug.db.get("k")]) {
    const e = await call().then(() => assert.fail("resolved"), (e) => e);
    assert.equal(e.code, "CAPABILITY_ABSENT");
    assert.equal(e.retryable, false);
  }
  assert.equal(env.posted.filter((m) => m.method === "tools/call").length, 0);
});

// Issue 28 item 11: a host without serverTools may never send the open
// tool's result; snug.ready resolves from ui/initialize alone, and an app's
// calls reject at once instead of leaving it half-initialised.
test("no serverTools and no tool result: snug.ready resolves, calls reject at once", async () => {
  const env = createEnv({ runtime: "snug-mcp.js", meta: { "app-id": "test.app", "display-name": "Test" } });
  env.domReady();
  const init = await msg(env, "ui/initialize");
  await env.send({ jsonrpc: "2.0", id: init.id, result: { protocolVersion: "2026-01-26", hostCapabilities: {}, hostContext: {} } });
  const ready = await env.snug.ready;
  assert.equal(ready.capabilities.db, false);
  assert.equal((await outcome(env.snug.db.exec("select 1"))).code, "CAPABILITY_ABSENT");
  assert.equal((await outcome(env.snug.ask("x", {}))).code, "CAPABILITY_ABSENT");
});

test("a request is a tools/call of its tool with the handle and the frame; the terminal frame answers it", async () => {
  const env = await mcp();
  const p = env.snug.db.set("k", 1);
  const c = await msg(env, "tools/call");
  assert.equal(c.params.name, "t__db");
  assert.equal(c.params.arguments.handle, "h.sig");
  const f = c.params.arguments.frame;
  assert.equal(f.type, "snug:db-request");
  assert.equal(f.instanceId, "inst1");
  await env.reply(c, { content: [], structuredContent: { v: 1, type: "snug:db-response", requestId: f.requestId, ok: true, result: {} } });
  assert.deepEqual(await outcome(p), { value: undefined });
});

test("every failure settles once: the tool's error, a JSON-RPC error, an error frame", async () => {
  const env = await mcp();
  const a = outcome(env.snug.db.get("a"));
  await env.reply(await msg(env, "tools/call"), { isError: true, content: [{ type: "text", text: "invalid or expired Snug handle" }] });
  assert.deepEqual(await a, { code: "HOST_ERROR", message: "invalid or expired Snug handle" });
  const b = outcome(env.snug.db.get("b"));
  await env.fail(await msg(env, "tools/call"), "tool not allowed");
  assert.equal((await b).code, "HOST_ERROR");
  const c = outcome(env.snug.ask("go", {}));
  const call = await msg(env, "tools/call");
  const rid = call.params.arguments.frame.requestId;
  await env.reply(call, { content: [], structuredContent: { v: 1, type: "snug:app-response", requestId: rid, ok: false, error: { code: "PARSE_FAILED", message: "no", retryable: true, attemptsRemaining: 2 } } });
  const e = await c;
  assert.equal(e.code, "PARSE_FAILED");
  // A second answer for the same call changes nothing.
  await env.reply(call, { content: [], structuredContent: { v: 1, type: "snug:app-response", requestId: rid, ok: true, data: {} } });
});

test("cancel: CANCELLED at once, notifications/cancelled for the pending call, a late answer ignored", async () => {
  const env = await mcp();
  const ac = new env.window.AbortController();
  const p = env.snug.ask("slow", {}, { signal: ac.signal });
  const call = await msg(env, "tools/call");
  ac.abort();
  assert.equal((await outcome(p)).code, "CANCELLED");
  const n = await msg(env, "notifications/cancelled");
  assert.equal(n.params.requestId, call.id);
  await env.reply(call, { content: [], structuredContent: { v: 1, type: "snug:app-response", requestId: call.params.arguments.frame.requestId, ok: true, data: {} } });
});

test("an answer in parts is fetched with the part tool and joined", async () => {
  const env = await mcp();
  const p = env.snug.db.get("big");
  const call = await msg(env, "tools/call");
  const text = JSON.stringify({ v: 1, type: "snug:db-response", requestId: call.params.arguments.frame.requestId, ok: true, result: { found: true, value: "é".repeat(50) } });
  await env.reply(call, { content: [], structuredContent: { part: text.slice(0, 40), next: "tr1" } });
  const more = await msg(env, "tools/call");
  assert.deepEqual({ ...more.params.arguments }, { handle: "h.sig", transfer: "tr1" });
  assert.equal(more.params.name, "t__part");
  await env.reply(more, { content: [], structuredContent: { part: text.slice(40) } });
  assert.equal((await outcome(p)).value, "é".repeat(50));
});

test("openUrl: the server's check, then ui/open-link; the host's answer decides", async () => {
  const env = await mcp();
  for (const [answer, want] of [
    [(m) => env.reply(m, {}), "opened"],
    [(m) => env.fail(m, "Link opening denied by user"), "declined"],
    [(m) => env.fail(m, "Policy violation"), { code: "HOST_ERROR", message: "Policy violation" }],
  ]) {
    const p = outcome(env.snug.openUrl("https://example.com/a"));
    const call = await msg(env, "tools/call");
    assert.equal(call.params.name, "t__open_url");
    await env.reply(call, { content: [], structuredContent: { v: 1, type: "snug:open-url-result", requestId: call.params.arguments.frame.requestId, status: "opened" } });
    const link = await msg(env, "ui/open-link");
    assert.equal(link.params.url, "https://example.com/a");
    await answer(link);
    // A refusal rejects with the host's text; the user's answer resolves.
    const got = await p;
    assert.deepEqual(typeof want == "string" ? got.value : got, want);
  }
  // Refused by the server's check: the host is never asked.
  const p = outcome(env.snug.openUrl("https://u@example.com/"));
  const call = await msg(env, "tools/call");
  await env.reply(call, { content: [], structuredContent: { v: 1, type: "snug:open-url-result", requestId: call.params.arguments.frame.requestId, status: "refused", reason: "MALFORMED: url: userinfo" } });
  assert.deepEqual(await p, { code: "MALFORMED", message: "url: userinfo" });
  await tick();
  assert.equal(env.posted.filter((m) => m.method === "ui/open-link" && !m.taken).length, 0);
});

test("saveFile: ui/download-file when the host advertises downloadFile, else no capability", async () => {
  const none = await mcp();
  assert.equal(none.snug.capabilities.saveFile, false);
  assert.equal((await outcome(none.snug.saveFile("a.txt", "x"))).code, "CAPABILITY_ABSENT");

  const env = await mcp({ host: { serverTools: {}, openLinks: {}, downloadFile: {} } });
  assert.equal(env.snug.capabilities.saveFile, true);
  for (const [answer, want] of [
    [(m) => env.reply(m, {}), { value: "saved" }],
    [(m) => env.reply(m, { isError: true }), { value: "declined" }],
    [(m) => env.fail(m, "Download denied by user"), { value: "declined" }],
    [(m) => env.fail(m, "Policy violation"), { code: "HOST_ERROR", message: "Policy violation" }],
  ]) {
    const p = outcome(env.snug.saveFile("Zürich notes.csv", "a,b\n", "text/csv"));
    const m = await msg(env, "ui/download-file");
    const [c] = m.params.contents;
    assert.equal(c.type, "resource");
    assert.equal(c.resource.uri, "file:///Z%C3%BCrich%20notes.csv");
    assert.equal(c.resource.mimeType, "text/csv");
    assert.equal(Buffer.from(c.resource.blob, "base64").toString(), "a,b\n");
    await answer(m);
    assert.deepEqual(await p, want);
  }
});

test("a net answer with a grant page has the host open it", async () => {
  const env = await mcp();
  const p = outcome(env.snug.net.fetch("https://api.example.com/x"));
  const call = await msg(env, "tools/call");
  const rid = call.params.arguments.frame.requestId;
  await env.reply(call, {
    content: [],
    _meta: { "snug/grant": "http://127.0.0.1:1/snug/grant/t" },
    structuredContent: { v: 1, type: "snug:net-response", requestId: rid, ok: false, error: { code: "NET_NOT_APPROVED", message: "allow it", retryable: false } },
  });
  assert.equal((await p).code, "NET_NOT_APPROVED");
  assert.equal((await msg(env, "ui/open-link")).params.url, "http://127.0.0.1:1/snug/grant/t");
});

test("host-context-changed: a partial theme update is a theme-change; resize is size-changed", async () => {
  const env = await mcp();
  const seen = [];
  env.snug.on("theme-change", (d) => seen.push(d.theme.mode));
  await env.send({ jsonrpc: "2.0", method: "ui/notifications/host-context-changed", params: { theme: "light" } });
  assert.deepEqual(seen, ["light"]);
  assert.equal(env.attrs["data-theme"], "light");
  assert.equal(env.styles["--color-text-primary"], "#eee", "the merged context keeps its variables");
  env.resize(321);
  assert.deepEqual({ ...(await msg(env, "ui/notifications/size-changed")).params }, { height: 321 });
});

test("messages from anything but the parent are ignored", async () => {
  const env = createEnv({ runtime: "snug-mcp.js", meta: { "app-id": "test.app" } });
  env.domReady();
  const init = await msg(env, "ui/initialize");
  await env.send({ jsonrpc: "2.0", id: init.id, result: { hostCapabilities: { serverTools: {} } } }, {});
  await tick();
  assert.equal(env.posted.some((m) => m.method === "ui/notifications/initialized"), false);
});

test("ui/resource-teardown: the app hears visibility false, the answer waits for its calls in flight", async () => {
  const env = await mcp();
  const heard = [];
  // A model-written app saves what it has when it is hidden.
  env.snug.on("visibility", ({ visible }) => (heard.push(visible), visible || env.snug.db.set("draft", "last words")));
  const earlier = env.snug.db.set("k", 1);
  const first = await msg(env, "tools/call");
  await env.send({ jsonrpc: "2.0", id: 77, method: "ui/resource-teardown", params: {} });
  assert.deepEqual(heard, [false]);
  const answered = () => env.posted.some((m) => m.id === 77 && m.result);
  await new Promise((r) => setTimeout(r, 60));
  assert.equal(answered(), false, "answered with a call in flight and a save waiting");
  const ok = (c) => env.reply(c, { content: [], structuredContent: { v: 1, type: "snug:db-response", requestId: c.params.arguments.frame.requestId, ok: true, result: {} } });
  await ok(first);
  await outcome(earlier);
  // db requests go one at a time: the save goes out once the first is answered.
  const save = await msg(env, "tools/call");
  assert.equal(save.params.arguments.frame.value, "last words");
  await new Promise((r) => setTimeout(r, 60));
  assert.equal(answered(), false, "answered with the save in flight");
  await ok(save);
  await until("the teardown's answer", answered);
});

test("ui/resource-teardown: a runtime that cannot save (ask only) answers at once; one with db waits", async () => {
  const env = await mcp({ runtime: "shaken/mcp-ask.js" });
  const asked = env.snug.ask("summarize", {});
  await msg(env, "tools/call");
  const heard = [];
  env.snug.on("visibility", ({ visible }) => heard.push(visible));
  await env.send({ jsonrpc: "2.0", id: 78, method: "ui/resource-teardown", params: {} });
  assert.deepEqual(heard, [false]);
  await until("the teardown's answer with an ask in flight", () => env.posted.some((m) => m.id === 78 && m.result));
  assert.equal(env.snug.db, undefined);
  const withDB = await mcp({ runtime: "shaken/mcp-ask-db.js" });
  withDB.snug.db.set("k", 1);
  await msg(withDB, "tools/call");
  await withDB.send({ jsonrpc: "2.0", id: 79, method: "ui/resource-teardown", params: {} });
  await new Promise((r) => setTimeout(r, 60));
  assert.equal(withDB.posted.some((m) => m.id === 79 && m.result), false, "answered with a save in flight");
  void asked.catch(() => {});
});

test("db requests go to the host one at a time, in the order made, whatever order the host answers in", async () => {
  const env = await mcp();
  const ps = [1, 2, 3, 4].map((v) => env.snug.db.set("k", v).catch((e) => e.code));
  const rest = env.snug.db.get("k");
  const calls = [];
  for (let i = 0; i < 5; i++) {
    const c = await msg(env, "tools/call");
    calls.push(c.params.arguments.frame);
    await tick();
    assert.equal(env.posted.filter((m) => m.method === "tools/call" && !m.taken).length, 0, "a second db call out before the first was answered");
    if (i == 1) {
      // A failed call lets the next go.
      await env.send({ jsonrpc: "2.0", id: c.id, error: { code: -32000, message: "gone" } });
      continue;
    }
    await env.reply(c, { content: [], structuredContent: { v: 1, type: "snug:db-response", requestId: c.params.arguments.frame.requestId, ok: true, result: { value: null } } });
  }
  assert.deepEqual(calls.map((f) => f.op + ":" + (f.value ?? "")), ["kvSet:1", "kvSet:2", "kvSet:3", "kvSet:4", "kvGet:"]);
  assert.equal(await ps[1], "HOST_ERROR");
  await Promise.all([...ps, rest]);
});
