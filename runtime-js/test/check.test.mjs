// checkFrame (dist/frames.mjs) on cases of its own; the shared vectors run in
// vectors.test.mjs.

import assert from "node:assert/strict";
import { test } from "node:test";
import { checkFrame } from "../dist/frames.mjs";
import { HOST_TO_APP, acceptHostReady, validateHostReady, validateOpenURLRequest } from "../gen/validate.mjs";

const rules = (v) => v.errors.map((e) => e.rule).sort();

const msg = (fields = {}) => ({
  v: 1,
  type: "snug:app-message",
  requestId: "r1",
  instanceId: "i1",
  appId: "a",
  action: "go",
  ...fields,
});
const net = (fields = {}) => ({
  v: 1,
  type: "snug:net-request",
  requestId: "n1",
  instanceId: "i1",
  url: "https://api.example.com/x",
  method: "GET",
  ...fields,
});
const openUrl = (url) => ({ v: 1, type: "snug:open-url-request", requestId: "o1", instanceId: "i1", url });

test("accept, ignore, and the three R1 rejections", () => {
  assert.deepEqual(checkFrame(msg()), { verdict: "accept", type: "snug:app-message" });
  assert.deepEqual(checkFrame({ v: 1, type: "snug:future-thing", x: 1 }), { verdict: "ignore", type: "snug:future-thing" });
  let v = checkFrame(msg({ v: 2 }));
  assert.equal(v.code, "UNSUPPORTED_VERSION");
  assert.equal(v.requestId, "r1");
  assert.deepEqual(v.answer.error.code, "UNSUPPORTED_VERSION");
  v = checkFrame(msg({ v: "1" }));
  assert.equal(v.code, "MALFORMED");
  assert.deepEqual(rules(v), ["frame.version"]);
  v = checkFrame({ v: 1, requestId: "r9" });
  assert.deepEqual(rules(v), ["frame.type"]);
  assert.equal(v.answer.type, "snug:app-response", "no type: the default answer");
  assert.equal(checkFrame([1, 2]).requestId, null);
  assert.deepEqual(rules(checkFrame("{not json")), ["frame.json"]);
});

test("requestId recovery: 1-128 code points, else no answer", () => {
  const over = "😀".repeat(129);
  let v = checkFrame(msg({ requestId: over, action: "" }));
  assert.equal(v.verdict, "reject");
  assert.equal(v.requestId, null);
  assert.equal(v.answer, null);
  v = checkFrame(msg({ requestId: "😀".repeat(128), action: "" }));
  assert.equal(v.requestId, "😀".repeat(128), "128 emoji are 128 code points (256 UTF-16 units)");
  assert.deepEqual(v.answer, {
    v: 1,
    type: "snug:app-response",
    requestId: "😀".repeat(128),
    ok: false,
    error: { code: "MALFORMED", message: v.answer.error.message, retryable: false },
  });
  v = checkFrame(msg({ requestId: 7, action: "" }));
  assert.equal(v.requestId, null);
});

test("code-point lengths", () => {
  assert.equal(checkFrame(msg({ action: "🦊".repeat(128) })).verdict, "accept");
  assert.deepEqual(rules(checkFrame(msg({ action: "🦊".repeat(129) }))), ["maxLength"]);
});

test("only the first stage with violations is reported", () => {
  const v = checkFrame(msg({ action: "x".repeat(200), appId: 5 }));
  assert.deepEqual(rules(v), ["type"]);
});

test("strict frames: keys are case-sensitive", () => {
  const f = net();
  delete f.url;
  f.URL = "https://api.example.com/x";
  const v = checkFrame(f);
  assert.equal(v.code, "MALFORMED");
  assert.deepEqual(rules(v), ["additionalProperties", "required"]);
  assert.equal(v.answer.type, "snug:net-response");
  assert.equal(checkFrame({ ...msg(), Action: "x" }).verdict, "accept", "an unknown key on a tolerant frame is ignored");
});

test("net refinements", () => {
  assert.deepEqual(rules(checkFrame(net({ headers: { Authorization: "Bearer x" } }))), ["net.header.credential"]);
  assert.deepEqual(rules(checkFrame(net({ headers: { "X-Api-Key": "k", accept: "a" } }))), ["net.header.credential"]);
  // Every key of a collision is named, as in Go.
  const dup = checkFrame(net({ headers: { Accept: "a", accept: "b" } }));
  assert.deepEqual(
    dup.errors.map((e) => `${e.path} ${e.rule}`),
    ["/headers/Accept net.header.duplicate", "/headers/accept net.header.duplicate"],
  );
  assert.deepEqual(rules(checkFrame(net({ body: "x" }))), ["net.body.method"]);
  assert.deepEqual(rules(checkFrame(net({ method: "HEAD", body: "" }))), ["net.body.method"]);
  assert.equal(checkFrame(net({ method: "POST", body: "x", headers: { "content-type": "a" } })).verdict, "accept");
});

test("size classes", () => {
  const pad = (f, bytes) => {
    const base = JSON.stringify(f).length;
    return { ...f, pad: "x".repeat(bytes - base - ',"pad":""'.length) };
  };
  const ok = pad(msg(), 256 * 1024);
  assert.equal(JSON.stringify(ok).length, 256 * 1024);
  assert.equal(checkFrame(ok).verdict, "accept");
  assert.deepEqual(rules(checkFrame(pad(msg(), 256 * 1024 + 1))), ["frame.size"]);
  const big = { v: 1, type: "snug:net-response", requestId: "n1", ok: true, status: 200, headers: {}, body: "" };
  const limit = 1024 * 1024 + 64 * 1024;
  const body = (n) => ({ ...big, body: "y".repeat(n - JSON.stringify(big).length) });
  assert.equal(JSON.stringify(body(limit)).length, limit);
  assert.equal(checkFrame(body(limit)).verdict, "accept");
  assert.deepEqual(rules(checkFrame(body(limit + 1))), ["frame.size"]);
  // bytes, not UTF-16 units: é is 2 bytes
  const e = { ...msg(), payload: { t: "é".repeat(131072) } };
  assert.deepEqual(rules(checkFrame(e)), ["frame.size"]);
});

test("duplicate keys in JSON text", () => {
  assert.deepEqual(rules(checkFrame('{"v":1,"type":"snug:app-cancel","requestId":"r1","requestId":"r2","instanceId":"i"}')), [
    "frame.duplicate-key",
  ]);
  assert.equal(checkFrame('{"v":1,"type":"snug:app-cancel","requestId":"r1","instanceId":"i","x":{"a":1},"y":{"a":2}}').verdict, "accept");
  assert.equal(checkFrame('{"v":1,"type":"snug:app-cancel","requestId":"r\\"1","instanceId":"i","s":["a","a"]}').verdict, "accept");
  // anywhere: an undeclared key, a payload, a map
  for (const text of [
    '{"v":1,"type":"snug:app-cancel","requestId":"r1","instanceId":"i","x":1,"x":2}',
    '{"v":1,"type":"snug:app-message","requestId":"r1","instanceId":"i","appId":"a","action":"b","payload":{"k":1,"k":2}}',
    '{"v":1,"type":"snug:net-request","requestId":"r1","instanceId":"i","url":"https://a.example/","method":"GET","headers":{"a":"1","a":"2"}}',
    '{"v":1,"type":"snug:app-cancel","requestId":"r1","\\u0069nstanceId":"i","instanceId":"j"}',
  ]) {
    const v = checkFrame(text);
    assert.deepEqual(rules(v), ["frame.duplicate-key"], text);
    assert.equal(v.requestId, "r1");
  }
  // the last requestId is the one recovered, as JSON.parse keeps it
  assert.equal(checkFrame('{"v":1,"type":"snug:app-cancel","requestId":"first","requestId":"second","instanceId":"i"}').requestId, "second");
  assert.equal(checkFrame('{"v":1,"type":"snug:app-cancel","requestId":"first","requestId":5,"instanceId":"i"}').requestId, null);
  assert.equal(checkFrame('{"__proto__":{"x":1},"v":1,"type":"snug:app-cancel","requestId":"r1","instanceId":"i"}').verdict, "accept");
});

test("R2 before the size class: an unknown type is ignored at any size", () => {
  const f = { v: 1, type: "snug:future-thing", pad: "x".repeat(256 * 1024) };
  assert.deepEqual(checkFrame(f), { verdict: "ignore", type: "snug:future-thing" });
});

test("open-url: the URL must read the same in WHATWG and RFC 3986", () => {
  const cases = {
    "https://example.com/docs?q=1#top": null,
    "https://EXAMPLE.com:443/": null,
    "HTTPS://example.com": null,
    "https://1.2.3.4/": null,
    "https://[2001:db8::1]:8443/x": null,
    "https://[::ffff:1.2.3.4]/": null,
    "https://a.b.c./": null,
    "https://example.com/a%20b": null,
    "https://example.com/a b": "openurl.url.char",
    "https://example.com/\tx": "openurl.url.char",
    "https://exämple.com/": "openurl.url.char",
    "https://example.com\\@evil.com/": "openurl.url.char",
    "http://example.com/": "openurl.url.scheme",
    "https:example.com": "openurl.url.scheme",
    "javascript:alert(1)": "openurl.url.scheme",
    "https://user:pw@example.com/": "openurl.url.userinfo",
    "https://@example.com/": "openurl.url.userinfo",
    "https://example.com/%zz": "openurl.url.percent",
    "https://example.com/%4": "openurl.url.percent",
    "https:///path": "openurl.url.host",
    "https://:443/": "openurl.url.host",
    "https://0x7f.1/": "openurl.url.host",
    "https://127.1/": "openurl.url.host",
    "https://1.2.3.4./": "openurl.url.host",
    "https://01.2.3.4/": "openurl.url.host",
    "https://2130706433/": "openurl.url.host",
    "https://[fe80::1%25eth0]/": "openurl.url.host",
    "https://[::1/": "openurl.url.host",
    "https://[1.2.3.4]/": "openurl.url.host",
    "https://exa%41mple.com/": "openurl.url.host",
    "https://example.com:99999/": "openurl.url.port",
    "https://example.com:8x/": "openurl.url.port",
    "https://example.com/a#b#c": "openurl.url.char",
    "https://example.com/a[b]": "openurl.url.char",
  };
  for (const [url, rule] of Object.entries(cases)) {
    const v = checkFrame(openUrl(url));
    if (rule === null) assert.equal(v.verdict, "accept", `${url}: ${JSON.stringify(v.errors)}`);
    else {
      assert.deepEqual(rules(v), [rule], url);
      // The reason says why, as Go's answer does: "CODE: the violation".
      assert.deepEqual(
        { type: v.answer.type, status: v.answer.status, reason: v.answer.reason.replace(/:.*/s, "") },
        { type: "snug:open-url-result", status: "refused", reason: "MALFORMED" },
      );
      assert.ok(v.answer.reason.includes(`(${rule})`), v.answer.reason);
      assert.ok([...v.answer.reason].length <= 300);
    }
  }
  assert.equal(validateOpenURLRequest(openUrl("https://example.com/")).length, 0);
});

test("the acceptors agree with the full validator on host→app frames", () => {
  const frames = [
    { v: 1, type: "snug:app-response", requestId: "r", ok: true, streaming: true, text: "a" },
    { v: 1, type: "snug:app-response", requestId: "r", ok: true, streaming: false },
    { v: 1, type: "snug:app-response", requestId: "r", ok: false, error: { code: "X", message: "m", retryable: 1 } },
    { v: 1, type: "snug:db-response", requestId: "r", ok: true, result: { rows: [[1, "a", null, {}]] } },
    { v: 1, type: "snug:db-response", requestId: "r", ok: true, result: { rows: [[1, "a", null, true]] } },
    { v: 1, type: "snug:net-response", requestId: "r", ok: true, status: 99, headers: {}, body: "" },
    { v: 1, type: "snug:net-response", requestId: "r", ok: true, status: 200, headers: { a: 1 }, body: "" },
    { v: 1, type: "snug:open-url-result", requestId: "r", status: "opened", reason: "x".repeat(301) },
    { v: 1, type: "snug:host-event", event: "" },
    { v: 1, type: "snug:host-ready", instanceId: "i", protocolVersions: [1], capabilities: { streaming: true, db: true, auth: false }, theme: { mode: "dark", tokens: { a: "b" } } },
  ];
  for (const f of frames) {
    const full = checkFrame(f).verdict === "accept";
    assert.equal(HOST_TO_APP[f.type](f), full, JSON.stringify(f));
  }
});

test("the registries and size-class constants are the registry and sizeClass, split", async () => {
  const c = await import("../gen/constants.mjs");
  const registries = Object.keys(c).filter((k) => /^CODES_[A-Z]+$/.test(k) && k != "CODES_KNOWN");
  assert.deepEqual(registries.sort(), ["CODES_CORE", "CODES_DB", "CODES_NET"]);
  const union = registries.flatMap((k) => c[k].split(" "));
  assert.deepEqual([...union].sort(), [...c.CODES].sort());
  assert.equal(new Set(union).size, union.length, "a code is in two registries");
  assert.equal(c.CODES_KNOWN, c.CODES.join(" "));
  assert.ok(c.CODES_CORE.split(" ").every((code) => !/^(NET|DB)_/.test(code)));
  const { APP_TO_HOST } = await import("../gen/validate.mjs");
  for (const type of Object.keys(APP_TO_HOST)) {
    const name = "MAX_BYTES_" + type.slice(5).toUpperCase().replace(/-/g, "_");
    assert.equal(c[name], c.sizeClass(type), name);
  }
});

// The acceptors carry the BCP 47 locale pattern case-folded (gen/js
// acceptRegex: [a-z] under the i flag without u, which folds no non-ASCII
// letter onto an ASCII one); the validator carries the schema's pattern
// under u. Every string of up to three characters over an alphabet with the
// tag's characters and the letters that fold onto ASCII ones under iu (ſ,
// K, ı, İ), a surrogate pair and a lone surrogate, then a million random
// tags built from the grammar's parts and mutated: one verdict.
test("the acceptors' case-folded locale pattern accepts what the schema's does", () => {
  const ready = (locale) => ({ v: 1, type: "snug:host-ready", instanceId: "i", protocolVersions: [1], capabilities: { streaming: true, db: true, auth: false }, theme: { mode: "dark" }, locale });
  const same = (s) => {
    const f = ready(s);
    const want = validateHostReady(f).length == 0;
    if (acceptHostReady(f) !== want) assert.fail(`locale ${JSON.stringify(s)}: acceptor ${!want}, validator ${want}`);
    return want;
  };
  const alphabet = ["a", "z", "A", "Z", "x", "X", "i", "I", "k", "K", "s", "S", "0", "9", "-", "_", " ", "\u017f", "\u212a", "\u0131", "\u0130", "\u00e9", "\ud83e\udd8a", "\ud800"];
  let accepted = 0;
  const walk = (prefix, depth) => {
    if (same(prefix)) accepted++;
    if (depth) for (const c of alphabet) walk(prefix + c, depth - 1);
  };
  walk("", 3);
  assert.ok(accepted > 100, `only ${accepted} short tags accepted`);
  let seed = 1;
  const rnd = (n) => ((seed = (seed * 1103515245 + 12345) % 2147483648), seed % n);
  const pick = (a) => a[rnd(a.length)];
  const run = (chars, lo, hi) => Array.from({ length: lo + rnd(hi - lo + 1) }, () => pick(chars)).join("");
  const letters = "abcxyzABCXYZ", digits = "0189", alnum = letters + digits;
  const tag = () => {
    if (rnd(10) == 0) return pick("xX") + "-" + run(alnum, 1, 8);
    const p = [rnd(4) ? run(letters, 2, 3) + (rnd(3) ? "" : "-" + run(letters, 3, 3)) : run(letters, 4, 8)];
    if (rnd(2)) p.push(run(letters, 4, 4));
    if (rnd(2)) p.push(rnd(2) ? run(letters, 2, 2) : run(digits, 3, 3));
    for (let k = rnd(3); k--; ) p.push(rnd(2) ? run(alnum, 5, 8) : pick(digits) + run(alnum, 3, 3));
    for (let k = rnd(2); k--; ) p.push(pick("abyzAB1xX") + "-" + run(alnum, 2, 8));
    if (rnd(3) == 0) p.push(pick("xX") + "-" + run(alnum, 1, 8));
    return p.join("-");
  };
  const weird = ["\u017f", "\u212a", "\u0131", "\u0130", "_", "-", "s", "k", "\ud83e\udd8a"];
  let tags = 0;
  for (let n = 0; n < 2e5; n++) {
    let s = tag();
    if (rnd(3) == 0) {
      const at = rnd(s.length + 1);
      s = s.slice(0, at) + pick(weird) + s.slice(at + rnd(2));
    }
    if (same(s)) tags++;
  }
  assert.ok(tags > 5e4, `only ${tags} random tags accepted`);
});
