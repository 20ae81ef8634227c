// The runtime (dist/snug.js) against a scripted host in a simulated window.

import assert from "node:assert/strict";
import { test } from "node:test";
import { connected, createEnv, hostReady, tick } from "./harness.mjs";

// Values made in the runtime's realm have that realm's prototypes; compare
// them as JSON.
const same = (actual, expected, msg) => assert.deepEqual(JSON.parse(JSON.stringify(actual)), expected, msg);

const settled = async (p) => {
  let state = "pending";
  p.then(
    () => (state = "resolved"),
    () => (state = "rejected"),
  );
  await tick();
  await tick();
  return state;
};

const rejects = async (p, code) => {
  try {
    await p;
  } catch (e) {
    assert.equal(e.name, "SnugError");
    if (code) assert.equal(e.code, code);
    return e;
  }
  assert.fail(`expected a SnugError ${code}`);
};

// ---- handshake -------------------------------------------------------------

test("announce from meta tags, then host-ready resolves ready", async () => {
  const env = createEnv({
    meta: {
      "app-id": "com.example.todo",
      "display-name": "Todo",
      description: "A list",
      "icon-emoji": "✅",
      "icon-color": "#0a0",
    },
  });
  await tick();
  assert.equal(env.sent("snug:app-announce").length, 0, "no announce before the document is parsed");
  env.domReady();
  const a = await env.next("snug:app-announce");
  assert.deepEqual(
    { ...a, taken: undefined },
    {
      v: 1,
      type: "snug:app-announce",
      appId: "com.example.todo",
      displayName: "Todo",
      description: "A list",
      iconEmoji: "✅",
      iconColor: "#0a0",
      protocolVersions: [1],
      taken: undefined,
    },
  );
  assert.equal(await settled(env.snug.ready), "pending");
  await env.send(hostReady({ instanceId: "inst-7" }));
  const info = await env.snug.ready;
  assert.equal(info.instanceId, "inst-7");
  assert.equal(info.locale, "en-US");
  same(info.protocolVersions, [1]);
  assert.equal(info.capabilities.db, true);
  assert.equal((await env.snug.ready).instanceId, "inst-7");
  assert.equal(env.snug.capabilities.net, true);
});

test("host-ready before the announce: ready waits for the ack", async () => {
  const env = createEnv({ meta: { "app-id": "a" } });
  await env.send(hostReady({ instanceId: "early" }));
  assert.equal(await settled(env.snug.ready), "pending");
  assert.equal(env.attrs["data-theme"], "light", "theme applied from the first host-ready");
  env.domReady();
  const a = await env.next("snug:app-announce");
  assert.equal(a.appId, "a");
  assert.equal(a.displayName, "Test app", "display name falls back to the title");
  assert.equal(await settled(env.snug.ready), "pending");
  await env.send(hostReady({ instanceId: "acked" }));
  assert.equal((await env.snug.ready).instanceId, "acked");
});

test("repeated host-ready updates capabilities, theme and instanceId", async () => {
  const env = await connected();
  const seen = [];
  env.snug.on("snug:host-ready", (info) => seen.push(info.instanceId));
  await env.send(
    hostReady({
      instanceId: "i2",
      capabilities: { streaming: true, db: true, auth: false },
      theme: { mode: "dark" },
    }),
  );
  assert.deepEqual(seen, ["i2"]);
  assert.equal((await env.snug.ready).instanceId, "i2");
  assert.equal(env.snug.capabilities.net, undefined);
  assert.equal(env.attrs["data-theme"], "dark");
  assert.equal(env.styles["--snug-bg"], undefined, "tokens of the old theme removed");
  const info = await env.snug.ready;
  assert.equal(info.instanceId, "i2", "ready's object is live");
  const p = env.snug.db.get("k");
  const f = await env.next("snug:db-request");
  assert.equal(f.instanceId, "i2", "requests echo the latest instanceId");
  await env.send({ v: 1, type: "snug:db-response", requestId: f.requestId, ok: true, result: { found: false, value: null } });
  assert.equal(await p, null);
});

test("explicit snug.announce overrides the meta tags and replaces the automatic one", async () => {
  const env = createEnv({ meta: { "app-id": "meta.id", "display-name": "Meta" } });
  env.snug.announce({ displayName: "Given", iconEmoji: "🦊" });
  env.domReady();
  await tick();
  const all = env.sent("snug:app-announce");
  assert.equal(all.length, 1);
  assert.equal(all[0].appId, "meta.id");
  assert.equal(all[0].displayName, "Given");
  assert.equal(all[0].iconEmoji, "🦊");
  assert.equal("description" in all[0], false, "absent fields are not sent");
});

test("re-announce sends a new announce and the ack updates the instance", async () => {
  const env = await connected();
  env.snug.announce({ appId: "again", displayName: "Again" });
  const a = await env.next("snug:app-announce");
  assert.equal(a.appId, "again");
  await env.send(hostReady({ instanceId: "i9" }));
  assert.equal((await env.snug.ready).instanceId, "i9");
});

test("document already parsed: announce goes out on its own", async () => {
  const env = createEnv({ loaded: true, meta: { "app-id": "late" } });
  const a = await env.next("snug:app-announce");
  assert.equal(a.appId, "late");
});

// ---- trust and validation --------------------------------------------------

test("frames from a source other than window.parent are ignored", async () => {
  const env = createEnv({ meta: { "app-id": "a" } });
  env.domReady();
  await env.next("snug:app-announce");
  await env.send(hostReady(), {}); // another window
  await env.send(hostReady(), null); // e.g. a MessageChannel or the app itself
  await env.send(hostReady(), env.window);
  assert.equal(await settled(env.snug.ready), "pending");
  assert.equal(env.attrs["data-theme"], undefined);
  await env.send(hostReady());
  assert.equal(await settled(env.snug.ready), "resolved");
});

test("invalid frames are dropped", async () => {
  const env = createEnv({ meta: { "app-id": "a" } });
  env.domReady();
  await env.next("snug:app-announce");
  for (const bad of [
    null,
    "snug:host-ready",
    { ...hostReady(), v: 2 },
    { ...hostReady(), instanceId: "" },
    { ...hostReady(), theme: { mode: "sepia" } },
    { ...hostReady(), capabilities: { streaming: true } },
    { ...hostReady(), protocolVersions: [] },
  ])
    await env.send(bad);
  assert.equal(await settled(env.snug.ready), "pending");
  await env.send(hostReady());
  await env.snug.ready;

  const p = env.snug.ask("go");
  const m = await env.next("snug:app-message");
  await env.send({ v: 1, type: "snug:app-response", requestId: m.requestId, ok: true, streaming: false }); // no data
  await env.send({ v: 1, type: "snug:app-response", requestId: m.requestId, ok: "yes", data: {} });
  await env.send({ v: 1, type: "snug:db-response", requestId: m.requestId, ok: true, result: {} }); // wrong pair
  await env.send({ v: 1, type: "snug:future-frame", requestId: m.requestId, ok: true, data: {} });
  assert.equal(await settled(p), "pending");
  await env.send({ v: 1, type: "snug:app-response", requestId: m.requestId, ok: true, streaming: false, data: { x: 1 } });
  same(await p, { x: 1 });
});

test("an ok:false answer ends its request even with streaming:true or when invalid (R3)", { timeout: 20000 }, async () => {
  const env = await connected();
  const error = { code: "CANCELLED", message: "stopped", retryable: false };
  // streaming:true on an error frame is invalid (the schema pins it false),
  // and still terminal: the app gets the host's error and waits no longer.
  let p = env.snug.ask("go", null, { onText: () => assert.fail("no text from an error frame") });
  let m = await env.next("snug:app-message");
  let rejected = assert.rejects(p, (e) => e.code == "CANCELLED" && e.message == "stopped");
  await env.send({ v: 1, type: "snug:app-response", requestId: m.requestId, ok: false, streaming: true, text: "x", error });
  await rejected;
  await env.send({ v: 1, type: "snug:app-response", requestId: m.requestId, ok: true, streaming: false, data: {} }); // too late: ignored

  // No valid error object: HOST_ERROR, not a hang.
  p = env.snug.ask("go");
  m = await env.next("snug:app-message");
  await env.send({ v: 1, type: "snug:db-response", requestId: m.requestId, ok: false }); // another pair: ignored
  await env.send({ v: 1, type: "snug:app-response", requestId: "r999", ok: false }); // no such request
  assert.equal(await settled(p), "pending");
  rejected = assert.rejects(p, (e) => e.code == "HOST_ERROR" && /invalid snug:app-response/.test(e.message));
  await env.send({ v: 1, type: "snug:app-response", requestId: m.requestId, ok: false }); // no error
  await rejected;

  // db, net and open-url answers alike.
  p = env.snug.db.get("k");
  m = await env.next("snug:db-request");
  rejected = assert.rejects(p, (e) => e.code == "HOST_ERROR");
  await env.send({ v: 1, type: "snug:db-response", requestId: m.requestId, ok: false, error: { code: "DB_TIMEOUT" } });
  await rejected;
});

test("frame types named like Object.prototype members are dropped without error", async () => {
  const env = await connected();
  const p = env.snug.ask("go");
  const m = await env.next("snug:app-message");
  for (const type of ["constructor", "__proto__", "toString", "hasOwnProperty", "valueOf"])
    await env.send({ v: 1, type, requestId: m.requestId, ok: true, streaming: false, data: {} });
  assert.equal(await settled(p), "pending");
  await env.send({ v: 1, type: "snug:app-response", requestId: m.requestId, ok: true, streaming: false, data: {} });
  same(await p, {});
});

// ---- ask -------------------------------------------------------------------

test("ask sends the request and resolves with data", async () => {
  const env = await connected();
  const schema = { type: "object", properties: { n: { type: "integer" } } };
  const p = env.snug.ask("count", { text: "a b" }, { state: [1, 2], schema });
  const m = await env.next("snug:app-message");
  assert.equal(m.v, 1);
  assert.equal(m.instanceId, "i1");
  assert.equal(m.appId, "test.app");
  assert.equal(m.action, "count");
  assert.deepEqual(m.payload, { text: "a b" });
  assert.deepEqual(m.state, [1, 2]);
  assert.deepEqual(m.responseSchema, schema);
  assert.match(m.requestId, /^.{1,128}$/);
  await env.send({ v: 1, type: "snug:app-response", requestId: m.requestId, ok: true, streaming: false, data: { n: 2 } });
  same(await p, { n: 2 });
});

test("ask without payload sends no payload field", async () => {
  const env = await connected();
  env.snug.ask("ping");
  const m = await env.next("snug:app-message");
  assert.equal("payload" in m, false);
  assert.equal("state" in m, false);
  assert.equal("responseSchema" in m, false);
});

test("a stream of 1,000 cumulative frames reaches onText in order, then the final data", async () => {
  const env = await connected();
  const texts = [];
  const p = env.snug.ask("write", {}, { onText: (t) => texts.push(t) });
  const m = await env.next("snug:app-message");
  let text = "";
  const frames = [];
  for (let i = 0; i < 1000; i++) {
    text += `w${i} `;
    frames.push({ v: 1, type: "snug:app-response", requestId: m.requestId, ok: true, streaming: true, text, seq: i });
  }
  for (const f of frames) await env.send(f);
  await env.send({ v: 1, type: "snug:app-response", requestId: m.requestId, ok: true, streaming: false, data: { done: true } });
  same(await p, { done: true });
  assert.equal(texts.length, 1000);
  assert.equal(texts[999], text);
  assert.ok(texts.every((t, i) => t === frames[i].text));
  await env.send({ ...frames[0] }); // a late streaming frame after the terminal one
  assert.equal(texts.length, 1000);
});

test("onPartial hears the object a streamed answer is writing, cut at every code unit; onText the raw text", async () => {
  const env = await connected();
  const full = 'Here:\n```json\n{"questions":[{"q":"Zürich?","answerIn":3},{"q":"why \\"not\\"","answerIn":"x"}],"done":true}\n```';
  const texts = [];
  const partials = [];
  const p = env.snug.ask("quiz", {}, {
    schema: { type: "object" },
    onText: (t) => texts.push(t),
    onPartial: (o) => partials.push(JSON.stringify(o)),
  });
  const f = await env.next("snug:app-message");
  for (let k = 1; k <= full.length; k++)
    await env.send({ v: 1, type: "snug:app-response", requestId: f.requestId, ok: true, streaming: true, seq: k - 1, text: full.slice(0, k) });
  const final = { questions: [{ q: "Zürich?", answerIn: 3 }, { q: 'why "not"', answerIn: "x" }], done: true };
  await env.send({ v: 1, type: "snug:app-response", requestId: f.requestId, ok: true, streaming: false, data: final });
  same(await p, final);
  assert.equal(texts.length, full.length, "onText hears every text, raw");
  assert.equal(texts.at(-1), full);
  assert.equal(new Set(partials).size, partials.length, "onPartial hears each new reading once");
  assert.ok(partials.length > 20);
  assert.deepEqual(JSON.parse(partials.at(-1)), final);
  assert.deepEqual(JSON.parse(partials[0]), {});
});

test("ask rejects with SnugError carrying every field of the error object", async () => {
  const env = await connected();
  const p = env.snug.ask("x");
  const r = rejects(p, "PARSE_FAILED");
  const m = await env.next("snug:app-message");
  const error = {
    code: "PARSE_FAILED",
    message: "no JSON object in the reply",
    retryable: true,
    rawExcerpt: "Sure! Here is",
    attemptsRemaining: 2,
  };
  await env.send({ v: 1, type: "snug:app-response", requestId: m.requestId, ok: false, error });
  const e = await r;
  assert.ok(e instanceof env.snug.SnugError);
  assert.equal(e.message, error.message);
  assert.equal(e.retryable, true);
  assert.equal(e.rawExcerpt, "Sure! Here is");
  assert.equal(e.attemptsRemaining, 2);
  assert.equal(e.retryAfterMs, undefined);
});

test("an unknown code renders as HOST_ERROR and keeps its retryable flag", async () => {
  const env = await connected();
  for (const retryable of [true, false]) {
    const p = env.snug.ask("x");
    const r = rejects(p, "HOST_ERROR");
    const m = await env.next("snug:app-message");
    const error = { code: "QUOTA_MOON_PHASE", message: "later", retryable, retryAfterMs: 500 };
    await env.send({ v: 1, type: "snug:app-response", requestId: m.requestId, ok: false, error });
    const e = await r;
    assert.equal(e.hostCode, "QUOTA_MOON_PHASE");
    assert.equal(e.retryable, retryable);
    assert.equal(e.retryAfterMs, 500);
  }
});

test("a tree-shaken runtime knows the core registry and its members' own (R5)", async () => {
  // An app without db never gets a db answer: a DB_ code on its ask is a
  // code it does not know. With db, and in the full runtime, it is known.
  for (const [runtime, known] of [["shaken/snug-ask.js", false], ["shaken/snug-ask-db.js", true], ["snug.js", true]]) {
    const env = await connected({ runtime });
    for (const code of ["THREAD_CONFLICT", "DB_TIMEOUT", "NET_SSRF_BLOCKED"]) {
      const p = env.snug.ask("x");
      const want = code == "THREAD_CONFLICT" || (code == "DB_TIMEOUT" && known) || (code == "NET_SSRF_BLOCKED" && runtime == "snug.js") ? code : "HOST_ERROR";
      const r = rejects(p, want);
      const m = await env.next("snug:app-message");
      await env.send({ v: 1, type: "snug:app-response", requestId: m.requestId, ok: false, error: { code, message: "m", retryable: true } });
      const e = await r;
      assert.equal(e.hostCode, code, runtime);
      assert.equal(e.retryable, true, runtime);
    }
  }
});

test("aborting the signal sends app-cancel and rejects with CANCELLED", async () => {
  const env = await connected();
  const ac = new AbortController();
  const texts = [];
  const p = env.snug.ask("slow", {}, { signal: ac.signal, onText: (t) => texts.push(t) });
  const r = rejects(p, "CANCELLED");
  const m = await env.next("snug:app-message");
  await env.send({ v: 1, type: "snug:app-response", requestId: m.requestId, ok: true, streaming: true, text: "a" });
  ac.abort();
  const c = await env.next("snug:app-cancel");
  assert.equal(c.requestId, m.requestId);
  assert.equal(c.instanceId, "i1");
  const e = await r;
  assert.equal(e.retryable, false);
  // the host's own terminal CANCELLED and any late text change nothing
  await env.send({ v: 1, type: "snug:app-response", requestId: m.requestId, ok: true, streaming: true, text: "ab" });
  await env.send({
    v: 1,
    type: "snug:app-response",
    requestId: m.requestId,
    ok: false,
    error: { code: "CANCELLED", message: "x", retryable: false },
  });
  assert.deepEqual(texts, ["a"]);
});

test("an already aborted signal rejects without sending anything", async () => {
  const env = await connected();
  const ac = new AbortController();
  ac.abort();
  await rejects(env.snug.ask("x", {}, { signal: ac.signal }), "CANCELLED");
  assert.equal(env.sent("snug:app-message").length, 0);
  assert.equal(env.sent("snug:app-cancel").length, 0);
});

test("concurrent requests resolve to the right callers", async () => {
  const env = await connected();
  const asks = [0, 1, 2, 3, 4].map((i) => env.snug.ask("n", { i }));
  const kv = env.snug.db.get("k");
  const msgs = [];
  for (let i = 0; i < 5; i++) msgs.push(await env.next("snug:app-message"));
  const d = await env.next("snug:db-request");
  const ids = new Set([...msgs.map((m) => m.requestId), d.requestId]);
  assert.equal(ids.size, 6, "requestIds are unique");
  for (const m of [...msgs].reverse())
    await env.send({ v: 1, type: "snug:app-response", requestId: m.requestId, ok: true, streaming: false, data: { i: m.payload.i } });
  await env.send({ v: 1, type: "snug:db-response", requestId: d.requestId, ok: true, result: { found: true, value: "v" } });
  same(
    await Promise.all(asks),
    [0, 1, 2, 3, 4].map((i) => ({ i })),
  );
  assert.equal(await kv, "v");
});

test("requests made before the handshake wait for it", async () => {
  const env = createEnv({ meta: { "app-id": "a" } });
  const p = env.snug.ask("early");
  env.domReady();
  await env.next("snug:app-announce");
  await tick();
  assert.equal(env.sent("snug:app-message").length, 0);
  await env.send(hostReady());
  const m = await env.next("snug:app-message");
  assert.equal(m.appId, "a");
  await env.send({ v: 1, type: "snug:app-response", requestId: m.requestId, ok: true, streaming: false, data: {} });
  same(await p, {});
});

// ---- db --------------------------------------------------------------------

const dbAnswer = async (env, op, result) => {
  const f = await env.next("snug:db-request");
  assert.equal(f.op, op);
  await env.send({ v: 1, type: "snug:db-response", requestId: f.requestId, ok: true, result });
  return f;
};

test("db.exec and db.query", async () => {
  const env = await connected();
  const result = { columns: ["id", "title"], rows: [[1, "a"], [2, null]], changes: 0, lastInsertRowid: 0 };
  let p = env.snug.db.exec("select id, title from t where done = ?", [0]);
  const f = await dbAnswer(env, "exec", result);
  assert.equal(f.sql, "select id, title from t where done = ?");
  assert.deepEqual(f.params, [0]);
  same(await p, result);
  p = env.snug.db.query("select id, title from t");
  const q = await dbAnswer(env, "exec", result);
  assert.equal("params" in q, false);
  same(await p, [
    { id: 1, title: "a" },
    { id: 2, title: null },
  ]);
});

test("db.script sends the statements as one script request, without params", async () => {
  const env = await connected();
  const result = { columns: [], rows: [], changes: 1, lastInsertRowid: 0 };
  const p = env.snug.db.script("alter table t add column due text; update meta set version = 2");
  const f = await dbAnswer(env, "script", result);
  assert.equal(f.sql, "alter table t add column due text; update meta set version = 2");
  assert.equal("params" in f, false);
  same(await p, result);
});

test("db.get and db.set (null deletes)", async () => {
  const env = await connected();
  let p = env.snug.db.get("prefs");
  let f = await dbAnswer(env, "kvGet", { found: true, value: { dark: true } });
  assert.equal(f.key, "prefs");
  same(await p, { dark: true });
  p = env.snug.db.get("missing");
  await dbAnswer(env, "kvGet", { found: false, value: null });
  assert.equal(await p, null);
  p = env.snug.db.set("prefs", { dark: false });
  f = await dbAnswer(env, "kvSet", {});
  assert.deepEqual(f.value, { dark: false });
  assert.equal(await p, undefined);
  p = env.snug.db.set("prefs", null);
  f = await dbAnswer(env, "kvSet", {});
  assert.equal(f.value, null);
  assert.ok("value" in f, "null is sent, not dropped");
  await p;
  p = env.snug.db.set("prefs", undefined);
  f = await dbAnswer(env, "kvSet", {});
  assert.equal(f.value, null);
  await p;
});

test("db.export returns bytes and db.import sends them as base64", async () => {
  const env = await connected();
  const bytes = new Uint8Array(100000).map((_, i) => (i * 7) % 256);
  const b64 = Buffer.from(bytes).toString("base64");
  let p = env.snug.db.export();
  await dbAnswer(env, "export", { data: b64, bytes: bytes.length, format: "sqlite3" });
  const got = await p;
  assert.equal(Object.prototype.toString.call(got), "[object Uint8Array]");
  assert.deepEqual(Buffer.from(got), Buffer.from(bytes));

  p = env.snug.db.import(bytes.subarray(10, 5010));
  const f = await dbAnswer(env, "import", { bytes: 5000 });
  assert.equal(f.data, Buffer.from(bytes.subarray(10, 5010)).toString("base64"));
  same(await p, { bytes: 5000 });
  p = env.snug.db.import(bytes.buffer.slice(0, 3));
  const g = await dbAnswer(env, "import", { bytes: 3 });
  assert.equal(g.data, Buffer.from(bytes.subarray(0, 3)).toString("base64"));
  await p;
});

test("a frame past its size class is refused before it is sent, naming the limit", async () => {
  const env = await connected();
  // 6.5 MiB of file is 8.7 MiB of base64: past the db class (8 MiB).
  const e = await rejects(env.snug.db.import(new Uint8Array(6.5 * 2 ** 20)), "MALFORMED");
  assert.match(e.message, /snug:db-request is \d+ bytes, past its size class of 8388608 bytes/);
  assert.equal(e.retryable, false);
  // Bytes count, not characters: 90,000 euro signs are 270,000 bytes of
  // UTF-8, past the default class (256 KiB) of an app-message.
  const a = await rejects(env.snug.ask("go", { text: "€".repeat(90000) }), "MALFORMED");
  assert.match(a.message, /snug:app-message is 270\d{3} bytes, past its size class of 262144 bytes/);
  await tick();
  assert.deepEqual(
    env.posted.filter((f) => f.type !== "snug:app-announce").map((f) => f.type),
    [],
    "nothing was sent",
  );
  // Just within the class, the same call goes out.
  const p = env.snug.ask("go", { text: "€".repeat(80000) });
  const f = await env.next("snug:app-message");
  assert.equal(f.payload.text.length, 80000);
  await env.send({ v: 1, type: "snug:app-response", requestId: f.requestId, ok: true, streaming: false, data: { ok: 1 } });
  same(await p, { ok: 1 });
});

test("a db error rejects with its SnugError", async () => {
  const env = await connected();
  const p = env.snug.db.exec("selec 1");
  const r = rejects(p, "DB_SQL_ERROR");
  const f = await env.next("snug:db-request");
  await env.send({
    v: 1,
    type: "snug:db-response",
    requestId: f.requestId,
    ok: false,
    error: { code: "DB_SQL_ERROR", message: 'near "selec": syntax error', retryable: false },
  });
  const e = await r;
  assert.match(e.message, /syntax error/);
});

// ---- net -------------------------------------------------------------------

test("net.fetch sends the request and returns a Response-like object", async () => {
  const env = await connected();
  const p = env.snug.net.fetch("https://api.example.com/items?q=1", {
    method: "post",
    headers: { "Content-Type": "application/json", Accept: "application/json" },
    body: '{"a":1}',
  });
  const f = await env.next("snug:net-request");
  assert.equal(f.url, "https://api.example.com/items?q=1");
  assert.equal(f.method, "POST");
  assert.deepEqual(f.headers, { accept: "application/json", "content-type": "application/json" });
  assert.equal(f.body, '{"a":1}');
  assert.deepEqual(Object.keys(f).sort(), ["body", "headers", "instanceId", "method", "requestId", "taken", "type", "url", "v"]);
  await env.send({
    v: 1,
    type: "snug:net-response",
    requestId: f.requestId,
    ok: true,
    status: 201,
    headers: { "content-type": "application/json", etag: '"x"' },
    body: '{"id":7,"name":"café ☕"}',
  });
  const r = await p;
  assert.equal(r.ok, true);
  assert.equal(r.status, 201);
  assert.equal(r.truncated, false);
  assert.equal(r.headers.get("Content-Type"), "application/json");
  assert.equal(r.headers.get("etag"), '"x"');
  same(await r.json(), { id: 7, name: "café ☕" });
  assert.equal(await r.text(), '{"id":7,"name":"café ☕"}');
  assert.equal(Buffer.from(await r.arrayBuffer()).toString("utf8"), '{"id":7,"name":"café ☕"}');
});

test("net.fetch: GET without options, base64 body, truncated, HTTP error status", async () => {
  const env = await connected();
  let p = env.snug.net.fetch("https://x.example/img");
  let f = await env.next("snug:net-request");
  assert.equal(f.method, "GET");
  assert.equal("headers" in f, false);
  assert.equal("body" in f, false);
  const png = new Uint8Array([137, 80, 78, 71, 0, 255, 1]);
  await env.send({
    v: 1,
    type: "snug:net-response",
    requestId: f.requestId,
    ok: true,
    status: 200,
    headers: {},
    body: Buffer.from(png).toString("base64"),
    bodyEncoding: "base64",
    truncated: true,
  });
  let r = await p;
  assert.equal(r.truncated, true);
  assert.deepEqual([...new Uint8Array(await r.arrayBuffer())], [...png]);

  p = env.snug.net.fetch("https://x.example/text");
  f = await env.next("snug:net-request");
  await env.send({
    v: 1,
    type: "snug:net-response",
    requestId: f.requestId,
    ok: true,
    status: 200,
    headers: {},
    body: Buffer.from("héllo").toString("base64"),
    bodyEncoding: "base64",
  });
  assert.equal(await (await p).text(), "héllo");

  p = env.snug.net.fetch("https://x.example/missing");
  f = await env.next("snug:net-request");
  await env.send({ v: 1, type: "snug:net-response", requestId: f.requestId, ok: true, status: 404, headers: {}, body: "nope" });
  r = await p;
  assert.equal(r.ok, false);
  assert.equal(r.status, 404);
  assert.equal(await r.text(), "nope");
});

test("net.fetch refuses credential headers locally, saying the host injects them", async () => {
  const env = await connected();
  for (const headers of [
    { Authorization: "Bearer x" },
    { cookie: "a=b" },
    { "X-API-Key": "k" },
    { "Proxy-Authorization": "p" },
    { "Set-Cookie": "s" },
    [["AUTHORIZATION", "y"]],
  ]) {
    const e = await rejects(env.snug.net.fetch("https://x.example/", { headers }), "MALFORMED");
    assert.match(e.message, /host injects/);
    const name = (Array.isArray(headers) ? headers[0][0] : Object.keys(headers)[0]).toLowerCase();
    assert.ok(e.message.includes(`"${name}"`), `message names the header: ${e.message}`);
  }
  await tick();
  assert.equal(env.sent("snug:net-request").length, 0, "nothing crossed the bridge");
});

test("a net error rejects with retryAfterMs", async () => {
  const env = await connected();
  const p = env.snug.net.fetch("https://x.example/");
  const r = rejects(p, "NET_FETCH_FAILED");
  const f = await env.next("snug:net-request");
  await env.send({
    v: 1,
    type: "snug:net-response",
    requestId: f.requestId,
    ok: false,
    error: { code: "NET_FETCH_FAILED", message: "rate ceiling", retryable: true, retryAfterMs: 1500 },
  });
  const e = await r;
  assert.equal(e.retryable, true);
  assert.equal(e.retryAfterMs, 1500);
});

test("net.fetch honours an AbortSignal", async () => {
  const env = await connected();
  const ac = new AbortController();
  const p = env.snug.net.fetch("https://x.example/", { signal: ac.signal });
  const r = rejects(p, "CANCELLED");
  const f = await env.next("snug:net-request");
  ac.abort();
  assert.equal((await env.next("snug:app-cancel")).requestId, f.requestId);
  await r;
});

// ---- open-url --------------------------------------------------------------

test("openUrl resolves with the user's answer (opened, declined)", async () => {
  const env = await connected();
  for (const status of ["opened", "declined"]) {
    const p = env.snug.openUrl("https://example.com/docs");
    const f = await env.next("snug:open-url-request");
    assert.equal(f.url, "https://example.com/docs");
    assert.deepEqual(Object.keys(f).sort(), ["instanceId", "requestId", "taken", "type", "url", "v"]);
    await env.send({ v: 1, type: "snug:open-url-result", requestId: f.requestId, status, reason: "r" });
    assert.equal(await p, status);
  }
});

test("a refused open-url or save-file rejects with the host's reason", async () => {
  const env = await connected({}, { capabilities: { streaming: true, db: true, auth: false, openUrl: true, saveFile: true } });
  for (const [reason, code, message, hostCode] of [
    ["MALFORMED: url: a character outside RFC 3986's set", "MALFORMED", "url: a character outside RFC 3986's set", "MALFORMED"],
    ["rate limit: too many links asked for in the last minute", "HOST_ERROR", "rate limit: too many links asked for in the last minute", undefined],
    ["FUTURE_CODE: something new", "HOST_ERROR", "something new", "FUTURE_CODE"],
    [undefined, "HOST_ERROR", "refused by the host", undefined],
  ]) {
    for (const [call, req, res] of [
      [() => env.snug.openUrl("https://example.com/"), "snug:open-url-request", "snug:open-url-result"],
      [() => env.snug.saveFile("a.txt", "hi"), "snug:save-file-request", "snug:save-file-result"],
    ]) {
      const p = call();
      p.catch(() => {});
      const f = await env.next(req);
      await env.send({ v: 1, type: res, requestId: f.requestId, status: "refused", ...(reason && { reason }) });
      const e = await rejects(p, code);
      assert.equal(e.message, message);
      assert.equal(e.reason, reason);
      assert.equal(e.hostCode, hostCode);
      assert.equal(e.retryable, false);
    }
  }
});

test("URLs are sent as browsers read them: WHATWG serialization, then RFC 3986", async () => {
  const env = await connected();
  for (const [given, sent] of [
    ["https://de.wikipedia.org/wiki/Zürich", "https://de.wikipedia.org/wiki/Z%C3%BCrich"],
    ["https://münchen.de/", "https://xn--mnchen-3ya.de/"],
    ["https://аpple.com/", "https://xn--pple-43d.com/"],
    ["https://api.example.com/search?q=Zürich café", "https://api.example.com/search?q=Z%C3%BCrich%20caf%C3%A9"],
    ["https://x.example/a|b^c[d]?q={x}`y\\z#f#g", "https://x.example/a%7Cb%5Ec%5Bd%5D?q=%7Bx%7D%60y%5Cz#f%23g"],
    ["https://x.example/100%", "https://x.example/100%25"],
    [new URL("https://x.example/ok?a=1"), "https://x.example/ok?a=1"],
  ]) {
    const o = env.snug.openUrl(given);
    assert.equal((await env.next("snug:open-url-request")).url, sent, `openUrl(${given})`);
    const n = env.snug.net.fetch(given);
    assert.equal((await env.next("snug:net-request")).url, sent, `net.fetch(${given})`);
    void o.catch(() => {}), void n.catch(() => {});
  }
});

test("a relative URL is refused in the app, never resolved against the document", async () => {
  const env = await connected();
  for (const u of ["/api/x", "data.json", "//example.com/x", "example.com/page", ""]) {
    for (const call of [() => env.snug.openUrl(u), () => env.snug.net.fetch(u)]) {
      const e = await rejects(call(), "MALFORMED");
      assert.match(e.message, /an absolute https:\/\/ URL is needed/);
    }
  }
  await tick();
  assert.equal(env.posted.filter((f) => f.type !== "snug:app-announce").length, 0);
});

// ---- save-file -------------------------------------------------------------

test("saveFile sends the name, the type and the bytes; resolves saved or declined", async () => {
  const env = await connected({}, { capabilities: { streaming: true, db: true, auth: false, saveFile: true } });
  const bytes = Uint8Array.from([0, 1, 2, 250, 255]);
  for (const [data, type, wantType, wantBytes, status] of [
    [bytes, undefined, undefined, bytes, "saved"],
    [bytes.buffer, "application/x-thing", "application/x-thing", bytes, "declined"],
    [new env.window.Blob(["a,b\n1,2\n"], { type: "text/csv" }), undefined, "text/csv", new TextEncoder().encode("a,b\n1,2\n"), "saved"],
    ["héllo", "text/plain", "text/plain", new TextEncoder().encode("héllo"), "saved"],
  ]) {
    const p = env.snug.saveFile("notes.csv", data, type);
    const f = await env.next("snug:save-file-request");
    assert.equal(f.name, "notes.csv");
    assert.equal(f.mimeType, wantType);
    assert.deepEqual([...Buffer.from(f.data, "base64")], [...wantBytes]);
    await env.send({ v: 1, type: "snug:save-file-result", requestId: f.requestId, status });
    assert.equal(await p, status);
  }
});

test("saveFile needs the host's saveFile capability", async () => {
  const env = await connected();
  const e = await rejects(env.snug.saveFile("a.txt", "x"), "CAPABILITY_ABSENT");
  assert.match(e.message, /does not offer "saveFile"/);
});

// ---- capabilities ----------------------------------------------------------

test("a capability the host does not advertise fails at once and sends nothing", async () => {
  const env = await connected({}, { capabilities: { streaming: true, db: false, auth: false } });
  for (const [cap, call] of [
    ["net", () => env.snug.net.fetch("https://x.example/")],
    ["openUrl", () => env.snug.openUrl("https://x.example/")],
    ["db", () => env.snug.db.get("k")],
    ["db", () => env.snug.db.exec("select 1")],
  ]) {
    const e = await rejects(call(), "CAPABILITY_ABSENT");
    assert.match(e.message, new RegExp(`does not offer "${cap}"`));
    assert.equal(e.retryable, false);
  }
  await tick();
  assert.equal(env.posted.filter((f) => f.type !== "snug:app-announce").length, 0);
});

// ---- events, theme, resize -------------------------------------------------

test("on/off receive host events; emit sends app events", async () => {
  const env = await connected();
  const got = [];
  const fn = (d) => got.push(d);
  const unsubscribe = env.snug.on("visibility", fn);
  await env.send({ v: 1, type: "snug:host-event", event: "visibility", data: { visible: false } });
  await env.send({ v: 1, type: "snug:host-event", event: "some-future-event", data: { a: 1 } });
  env.snug.off("visibility", fn);
  await env.send({ v: 1, type: "snug:host-event", event: "visibility", data: { visible: true } });
  env.snug.on("visibility", fn);
  unsubscribe();
  await env.send({ v: 1, type: "snug:host-event", event: "visibility", data: { visible: true } });
  assert.deepEqual(got, [{ visible: false }]);

  env.snug.emit("selection", { id: 3 });
  const e = await env.next("snug:app-event");
  assert.deepEqual({ ...e, taken: undefined }, { v: 1, type: "snug:app-event", instanceId: "i1", event: "selection", data: { id: 3 }, taken: undefined });
});

test("theme: data-theme and tokens applied, updated on theme-change", async () => {
  const env = await connected({}, { theme: { mode: "light", tokens: { "--snug-bg": "#fff", "--snug-fg": "#111" } } });
  assert.equal(env.attrs["data-theme"], "light");
  assert.equal(env.styles["--snug-bg"], "#fff");
  assert.equal(env.styles["--snug-fg"], "#111");
  const seen = [];
  env.snug.on("theme-change", (d) => seen.push(d.theme.mode));
  await env.send({
    v: 1,
    type: "snug:host-event",
    event: "theme-change",
    data: { theme: { mode: "dark", tokens: { "--snug-bg": "#000" } } },
  });
  assert.equal(env.attrs["data-theme"], "dark");
  assert.equal(env.styles["--snug-bg"], "#000");
  assert.equal(env.styles["--snug-fg"], undefined);
  assert.equal((await env.snug.ready).theme.mode, "dark");
  assert.deepEqual(seen, ["dark"]);
});

test("theme: only custom property names (--*) are applied", async () => {
  const env = await connected({}, { theme: { mode: "light", tokens: { "--snug-bg": "#fff", color: "red", "background-image": "url(https://evil.example/x)", "-x": "1" } } });
  assert.equal(env.styles["--snug-bg"], "#fff");
  assert.deepEqual(Object.keys(env.styles), ["--snug-bg"], "names without the -- prefix are not set");
  await env.send({ v: 1, type: "snug:host-event", event: "theme-change", data: { theme: { mode: "dark", tokens: { display: "none" } } } });
  assert.deepEqual(Object.keys(env.styles), [], "the old token removed, the new non-custom name not set");
});

test("resize app-events: debounced, only on change", async () => {
  const env = await connected();
  assert.equal(env.observers.length, 1);
  env.resize(100);
  env.resize(150);
  env.resize(180.2);
  const e = await env.next("snug:app-event");
  assert.deepEqual(e.data, { height: 181 });
  assert.equal(e.event, "resize");
  env.resize(181);
  await env.afterTimers(); // the debounce's timer has run: a report would be out
  assert.equal(env.sent("snug:app-event").length, 1, "no event when the height did not change");
  env.resize(40);
  assert.deepEqual((await env.next("snug:app-event")).data, { height: 40 });
  await env.send(hostReady()); // a repeated host-ready adds no second observer
  assert.equal(env.observers.length, 1);
});
