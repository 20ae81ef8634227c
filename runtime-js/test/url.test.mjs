// The URLs the runtime sends (src/url.js, behind snug.openUrl and
// snug.net.fetch) against checkFrame, the verdict `snuggen check frame`
// prints: every URL of the shared vectors and random Unicode, space and
// punctuation URLs. Go holds the same over the net gate's reading
// (hostkit/netgate TestRuntimeURLsPassTheFramesAndTheGate).

import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { test } from "node:test";
import { checkFrame } from "../dist/frames.mjs";
import { absoluteURL } from "../src/url.js";

const fail = (code, message) => Object.assign(new Error(message), { code });

// Every "url" of testdata/frames.json, frames kept as text included.
const vectorURLs = () => {
  const urls = [];
  const walk = (v) => {
    if (typeof v == "string") {
      if (v.startsWith("{")) {
        try {
          walk(JSON.parse(v));
        } catch {}
      }
    } else if (Array.isArray(v)) v.forEach(walk);
    else if (v && typeof v == "object")
      for (const [k, x] of Object.entries(v)) {
        if (k == "url" && typeof x == "string" && x.includes(":")) urls.push(x);
        walk(x);
      }
  };
  walk(JSON.parse(readFileSync(new URL("../../testdata/frames.json", import.meta.url), "utf8")));
  return urls;
};

// randomURLs: Unicode hosts (one script per label) and every kind of
// character in paths, queries and fragments; a seeded generator (xorshift).
const randomURLs = (n, seed) => {
  let x = seed;
  const rnd = (k) => ((x ^= x << 13), (x ^= x >>> 17), (x ^= x << 5), (x >>> 0) % k);
  const scripts = [[0x61, 0x7a], [0xe0, 0xfe], [0x430, 0x44f], [0x3b1, 0x3c9], [0x4e00, 0x9fa5]];
  const label = () => {
    const [a, b] = scripts[rnd(scripts.length)];
    let s = "";
    for (let i = 0, k = 1 + rnd(8); i < k; i++) s += String.fromCodePoint(a + rnd(b - a + 1)).replace("÷", "é");
    return s;
  };
  const pieces = ["a", "Z", "0", "é", "Zürich", "café", "東京", "😀", " ", "\t", "%", "%41", "%zz", "|", "^", "`", "{", "}", "[", "]", "\\", '"', "<", ">", "'", "#", "?", "&", "=", "+", ";", ",", "!", "$", "(", ")", "*", "@", ":", "~", "/", ".."];
  const part = () => Array.from({ length: rnd(10) }, () => pieces[rnd(pieces.length)]).join("");
  return Array.from({ length: n }, () => {
    let u = `https://${rnd(4) ? "" : label() + "."}${label()}.${["com", "de", "рф", "example"][rnd(4)]}/${part()}`;
    if (rnd(2)) u += `?q=${part()}`;
    if (rnd(3) == 0) u += `#${part()}`;
    return u;
  });
};

const openUrl = (url) => ({ v: 1, type: "snug:open-url-request", requestId: "r", instanceId: "i", url });
const netGet = (url) => ({ v: 1, type: "snug:net-request", requestId: "r", instanceId: "i", url, method: "GET" });
const bare = (u) => u.replace(/^([a-z]+:\/\/[^/?#]*).*$/is, "$1/");
const rules = (v) => (v.errors || []).map((e) => e.rule).join(",");

test("what the runtime sends passes checkFrame (open-url and net-request), or the authority itself is refused", () => {
  const urls = [...vectorURLs(), ...randomURLs(2000, 14)];
  let open = 0;
  for (const u of urls) {
    let sent, parsed;
    try {
      parsed = new URL(u);
    } catch {}
    try {
      sent = absoluteURL(u, fail);
    } catch (e) {
      assert.equal(parsed, undefined, `${u}: WHATWG reads it, the runtime refused it`);
      assert.equal(e.code, "MALFORMED");
      assert.match(e.message, /an absolute https:\/\/ URL is needed/);
      continue;
    }
    if (!/^https?:$/.test(parsed.protocol)) continue;
    assert.equal(new URL(sent).href, sent, `${u}: sent as ${sent}, which WHATWG reads differently`);
    for (const make of [netGet, ...(parsed.protocol == "https:" && !parsed.username && !parsed.password ? [openUrl] : [])]) {
      const v = checkFrame(make(sent));
      if (v.verdict == "accept") continue;
      if (v.errors.some((e) => e.rule == "maxLength")) continue; // a long URL: its length, not its encoding
      const b = checkFrame(make(bare(sent)));
      assert.ok(b.verdict == "reject" && rules(b) == rules(v), `${u.slice(0, 100)} sent as ${sent.slice(0, 100)}: ${make(sent).type} ${rules(v)} (its authority alone: ${b.verdict})`);
    }
    if (parsed.protocol == "https:") open++;
  }
  assert.ok(open > 1500, `${open} https URLs checked`);
});
