// The runtime's window (issue 26 item 2): at most INSTANCE_MAX_IN_FLIGHT
// requests of an instance are out at once, the host's limit; the rest wait
// and go out in the order they were made, as answers end others.

import assert from "node:assert/strict";
import { test } from "node:test";
import { INSTANCE_MAX_IN_FLIGHT as W } from "../gen/constants.mjs";
import { connected, tick } from "./harness.mjs";

const requests = (env) => env.posted.filter((f) => f.type == "snug:db-request" || f.type == "snug:app-message");
const ok = (f) =>
  f.type == "snug:db-request"
    ? { v: 1, type: "snug:db-response", requestId: f.requestId, ok: true, result: {} }
    : { v: 1, type: "snug:app-response", requestId: f.requestId, ok: true, streaming: false, data: {} };

test("a burst of un-awaited saves: never more than the window out, all sent in the order made", async () => {
  const env = await connected();
  const n = 3 * W + 5;
  const saves = Array.from({ length: n }, (_, i) => env.snug.db.set("links", { i }));
  await tick();
  assert.equal(requests(env).length, W, "the first burst fills the window and no more");
  // Answers come back in any order; each frees one place, which the next
  // queued request takes at once.
  const answered = new Set();
  for (let k = 0; answered.size < n; k++) {
    const out = requests(env).filter((f) => !answered.has(f.requestId));
    assert.equal(out.length, Math.min(W, n - answered.size), `after ${answered.size} answers`);
    const f = out[(k * 7) % out.length];
    answered.add(f.requestId);
    await env.send(ok(f));
  }
  assert.deepEqual(
    requests(env).map((f) => f.value.i),
    Array.from({ length: n }, (_, i) => i),
    "sent in the order the app made them",
  );
  assert.equal((await Promise.allSettled(saves)).filter((s) => s.status != "fulfilled").length, 0);
});

test("an error answer frees a place; a queued request that is aborted is never sent", async () => {
  const env = await connected();
  const first = Array.from({ length: W }, (_, i) => env.snug.db.get("k" + i));
  const ac = new AbortController();
  const dropped = env.snug.ask("queued", {}, { signal: ac.signal });
  const later = env.snug.db.get("later");
  await tick();
  assert.equal(requests(env).length, W);
  ac.abort();
  await assert.rejects(dropped, { code: "CANCELLED" });
  await tick();
  assert.equal(requests(env).length, W, "the abort of a queued request sends nothing");
  assert.equal(env.sent("snug:app-cancel").length, 0, "nothing to cancel on the host");
  const f0 = requests(env)[0];
  const failed = assert.rejects(first[0], { code: "DB_SQL_ERROR" });
  await env.send({ v: 1, type: "snug:db-response", requestId: f0.requestId, ok: false, error: { code: "DB_SQL_ERROR", message: "x", retryable: false } });
  await failed;
  const next = requests(env)[W];
  assert.equal(next.key, "later", "the place went to the next request still queued");
  assert.equal(env.sent("snug:app-message").length, 0);
  for (const f of requests(env).slice(1)) await env.send(ok(f));
  await Promise.all([...first.slice(1), later]);
});

test("aborting a sent request cancels it on the host before the next queued one goes out", async () => {
  const env = await connected();
  const ac = new AbortController();
  const sent = env.snug.ask("slow", {}, { signal: ac.signal });
  const rest = Array.from({ length: W }, (_, i) => env.snug.db.get("k" + i));
  await tick();
  assert.equal(requests(env).length, W);
  ac.abort();
  await assert.rejects(sent, { code: "CANCELLED" });
  await tick();
  const cancel = env.posted.findIndex((f) => f.type == "snug:app-cancel");
  const next = env.posted.findIndex((f) => f.type == "snug:db-request" && f.key == "k" + (W - 1));
  assert.ok(cancel >= 0 && next > cancel, `app-cancel at ${cancel}, the next request at ${next}: the host would see ${W + 1} in flight`);
  for (const f of requests(env).slice(1)) await env.send(ok(f));
  await Promise.all(rest);
});
