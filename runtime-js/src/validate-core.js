// The schema-independent half of the frame validators: the descriptor walker
// (check, run), the refinement checks of each rules.json kind, the open-url
// reading checks and the acceptor combinators. The generated
// runtime-js/gen/validate.mjs holds only what the schemas decide (one
// descriptor, validator and acceptor per frame) and calls these; the tables
// they read (rule stages, the xn-- label classes) come from the generated
// constants. Keep it in step with frame/read.go and internal/urlread: the
// conformance vectors and the differential tests hold both to one verdict.

import { RULE_STAGES, ACE_CATEGORIES, RTL_SCRIPTS, MESSAGES, TYPE_NAMES } from "../gen/constants.mjs";

// A descriptor is a kind letter alone when the type has no constraint, else
// an object. Keys: k kind (s string, i integer, n number, b boolean, o object
// with fields, r object, m map, a array, * any, x scalar), n/x min/max length
// in code points, lo/hi minimum/maximum, e enum, c const, p pattern (a
// RegExp with the u flag, of the subset gen/load allows), f fields
// {name: type}, q required field names, s strict, w conditions
// [{field: equals, ...}, required names, {pinned name: value}?] (a condition
// holds when every field equals its value), t item or value type, ni/xi min/max items,
// xp max properties, kn/kx key length bounds.

export const isObject = (v) => typeof v == "object" && !!v && !Array.isArray(v);
const has = Object.hasOwn;
const codePoints = (s) => {
  let n = 0;
  for (const _ of s) n++;
  return n;
};
const ptr = (p, key) => p + "/" + String(key).replace(/~/g, "~0").replace(/\//g, "~1");
const KIND_NAMES = { s: "string", i: "integer", n: "number", b: "boolean", a: "array", x: "scalar", o: "object", m: "object", r: "object" };
const json = (v) => JSON.stringify(v);

// say is the message of a keyword (rules.json messages), its {names} filled
// from vars: the same words the Go validator says.
const say = (key, vars = {}) => MESSAGES[key].replace(/\{(\w+)\}/g, (_, name) => vars[name]);
const shorter = (limit) => say(limit == 1 ? "minLength1" : "minLength", { limit });

function check(t, v, p, out, top) {
  const bad = (rule, message, at = p) => out.push({ path: at, rule, message });
  if (typeof t == "string") t = { k: t };
  const k = t.k;
  if (
    k == "s" ? typeof v != "string"
    : k == "i" ? !Number.isInteger(v)
    : k == "n" ? typeof v != "number"
    : k == "b" ? typeof v != "boolean"
    : k == "a" ? !Array.isArray(v)
    : k == "x" ? v !== null && typeof v == "object"
    : k != "*" && !isObject(v)
  )
    return bad("type", say("type", { type: TYPE_NAMES[KIND_NAMES[k]] }));
  if (t.c !== undefined && v !== t.c) bad("const", say("const", { value: json(t.c) }));
  if (t.e && !t.e.includes(v)) bad("enum", say("enum", { values: t.e.join(", ") }));
  if (k == "s" && (t.n || t.x)) {
    const n = codePoints(v);
    if (n < t.n) bad("minLength", shorter(t.n));
    if (n > t.x) bad("maxLength", say("maxLength", { limit: t.x }));
  }
  if (t.p && !t.p.test(v)) bad("pattern", say("pattern", { pattern: t.p.source }));
  // Only a number is compared: < on an object would call its toString or
  // valueOf member (a payload may hold one) or join a deep array.
  if (typeof v == "number") {
    if (v < t.lo) bad("minimum", say("minimum", { limit: t.lo }));
    if (v > t.hi) bad("maximum", say("maximum", { limit: t.hi }));
  }
  if (k == "a") {
    if (v.length < t.ni) bad("minItems", say("minItems", { limit: t.ni }));
    if (v.length > t.xi) bad("maxItems", say("maxItems", { limit: t.xi }));
    if (t.t) v.forEach((item, i) => check(t.t, item, ptr(p, i), out));
  }
  if (k == "o" || k == "m" || k == "r") {
    const keys = Object.keys(v);
    if (keys.length > t.xp) bad("maxProperties", say("maxProperties", { limit: t.xp }));
    if (k == "m")
      for (const key of keys) {
        const n = codePoints(key);
        if (n < t.kn) bad("propertyNames", shorter(t.kn), ptr(p, key));
        if (n > t.kx) bad("propertyNames", say("maxLength", { limit: t.kx }), ptr(p, key));
        if (t.t) check(t.t, v[key], ptr(p, key), out);
      }
    if (k == "o") {
      for (const name in t.f)
        if (has(v, name)) check(t.f[name], v[name], ptr(p, name), out);
        else if (t.q?.includes(name)) bad("required", say("required"), ptr(p, name));
      if (t.s)
        for (const key of keys)
          if (!has(t.f, key) && !(top && (key == "v" || key == "type")))
            bad("additionalProperties", say("additionalProperties"), ptr(p, key));
      for (const [cond, names, pins = {}] of t.w || [])
        if (holds(cond, v)) {
          const when = { when: Object.keys(cond).map((field) => say("when", { field, value: json(cond[field]) })).join(MESSAGES.whenJoin) };
          for (const name of names) if (!has(v, name)) bad("required", say("requiredWhen", when), ptr(p, name));
          for (const name in pins)
            if (has(v, name) && v[name] !== pins[name]) bad("const", say("constWhen", { ...when, value: json(pins[name]) }), ptr(p, name));
        }
    }
  }
}

// holds reports whether every field of cond is in v with its value (a
// string or a boolean: no inherited member of an object is one).
const holds = (cond, v) => Object.keys(cond).every((field) => v[field] === cond[field]);

export function run(t, frame, refine) {
  const out = [];
  check(t, frame, "", out, 1);
  if (out.length) {
    const first = Math.min(...out.map((e) => RULE_STAGES[e.rule]));
    return out.filter((e) => RULE_STAGES[e.rule] == first);
  }
  // Refinements run only on a frame that passed every schema stage.
  if (refine) refine(frame, out);
  return out;
}

// ---- refinements (rules.json) ------------------------------------------------

// Field must be absent when frame[when] is one of values.
export const forbidWhen = (f, out, rule, field, when, values) => {
  if (has(f, field) && values.includes(f[when])) out.push({ path: ptr("", field), rule });
};

// No key of the map frame[field] is in list.
export const keysNotIn = (f, out, rule, field, list, fold) => {
  for (const key in f[field] || {})
    if (list.includes(fold ? key.toLowerCase() : key)) out.push({ path: ptr(ptr("", field), key), rule });
};

// Keys of the map frame[field] are unique (case-insensitively when fold):
// every key that collides with another is named, as in Go.
export const keysUnique = (f, out, rule, field, fold) => {
  const count = new Map();
  const norm = (key) => (fold ? key.toLowerCase() : key);
  for (const key in f[field] || {}) count.set(norm(key), (count.get(norm(key)) || 0) + 1);
  for (const key in f[field] || {}) if (count.get(norm(key)) > 1) out.push({ path: ptr(ptr("", field), key), rule });
};

// The open-url reading checks: the URL must be read the same by a WHATWG
// parser (what the browser opens) and a strict RFC 3986 parser (what the
// dialog shows). ids maps each check (char, scheme, userinfo, percent, host,
// port) to its rule id; the first failing check is the violation.
const URL_CHARS = /^[A-Za-z0-9\-._~:/?#[\]@!$&'()*+,;=%]*$/;
const PATH_CHARS = /^[A-Za-z0-9\-._~!$&'()*+,;=:@%/]*$/;
const QUERY_CHARS = /^[A-Za-z0-9\-._~!$&'()*+,;=:@%/?]*$/;
const HOST_CHARS = /^[A-Za-z0-9\-._~!$&'()*+,;=]+$/;
const DEC_OCTET = /^(25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])$/;
const ipv4 = (s) => {
  const parts = s.split(".");
  return parts.length == 4 && parts.every((x) => DEC_OCTET.test(x));
};
const ipv6 = (s) => {
  const halves = s.split("::");
  if (halves.length > 2) return false;
  let groups = 0;
  for (let h = 0; h < halves.length; h++) {
    if (halves[h] == "") continue;
    const parts = halves[h].split(":");
    for (let i = 0; i < parts.length; i++) {
      if (h == halves.length - 1 && i == parts.length - 1 && parts[i].includes(".")) {
        if (!ipv4(parts[i])) return false;
        groups += 2;
      } else if (/^[0-9A-Fa-f]{1,4}$/.test(parts[i])) groups++;
      else return false;
    }
  }
  return halves.length == 2 ? groups <= 7 : groups == 8;
};
// An xn-- label must decode to a label a WHATWG parser accepts; the rule is
// internal/urlread's ACELabelOK, step for step: RFC 3492 Punycode that
// Built on first use: the runtime bundles these modules for the acceptors
// alone, and esbuild keeps a top-level `new RegExp` (it cannot know it is
// pure), with the two tables it reads: some 300 B min+gzip of every app.
let ACE_CHARS, RTL_CHAR, RTL_LABEL;
const labelClasses = () => {
  if (ACE_CHARS) return;
  const ace = "[" + ACE_CATEGORIES.map((c) => "\\p{" + c + "}").join("") + "-]";
  const rtl = "[" + RTL_SCRIPTS.map((s) => "\\p{Script=" + s + "}").join("") + "]";
  ACE_CHARS = new RegExp("^" + ace + "+$", "u");
  RTL_CHAR = new RegExp(rtl, "u");
  RTL_LABEL = new RegExp("^(?:(?=" + rtl + ")\\p{L})(?:(?=" + rtl + ")\\p{L}|\\p{M})*$", "u");
};
const PC_MAX = 2147483647;
const pcDigit = (c) => (c >= 48 && c <= 57 ? c - 22 : c >= 97 && c <= 122 ? c - 97 : c >= 65 && c <= 90 ? c - 65 : -1);
const pcAdapt = (delta, points, first) => {
  delta = first ? Math.floor(delta / 700) : delta >> 1;
  delta += Math.floor(delta / points);
  let k = 0;
  for (; delta > 455; k += 36) delta = Math.floor(delta / 35);
  return k + Math.floor((36 * delta) / (delta + 38));
};
const punycodeDecode = (s) => {
  const out = [];
  const b = s.lastIndexOf("-");
  if (b > 0) {
    for (let j = 0; j < b; j++) out.push(s.charCodeAt(j));
    s = s.slice(b + 1);
  }
  let n = 128, i = 0, bias = 72;
  for (let pos = 0; pos < s.length; ) {
    const oldi = i;
    for (let w = 1, k = 36; ; k += 36) {
      if (pos >= s.length) return;
      const digit = pcDigit(s.charCodeAt(pos++));
      if (digit < 0 || digit > Math.floor((PC_MAX - i) / w)) return;
      i += digit * w;
      const t = k - bias < 1 ? 1 : k - bias > 26 ? 26 : k - bias;
      if (digit < t) break;
      if (w > Math.floor(PC_MAX / (36 - t))) return;
      w *= 36 - t;
    }
    const l = out.length + 1;
    bias = pcAdapt(i - oldi, l, oldi == 0);
    if (Math.floor(i / l) > PC_MAX - n) return;
    n += Math.floor(i / l);
    i %= l;
    if (n < 128 || n > 0x10ffff || (n >= 0xd800 && n <= 0xdfff)) return;
    out.splice(i++, 0, n);
  }
  return String.fromCodePoint(...out);
};
const aceLabelOK = (label) => {
  const s = punycodeDecode(label.slice(4));
  labelClasses();
  return (
    !!s &&
    /[^\0-\x7f]/.test(s) &&
    !s.startsWith("xn--") &&
    s.normalize("NFKC") == s &&
    s.toLowerCase() == s &&
    ACE_CHARS.test(s) &&
    !/^\p{M}/u.test(s) &&
    (!RTL_CHAR.test(s) || RTL_LABEL.test(s))
  );
};
const urlProblem = (u) => {
  if (!URL_CHARS.test(u)) return "char";
  if (!/^https:\/\//i.test(u)) return "scheme";
  const rest = u.slice(8);
  const end = rest.search(/[/?#]/);
  const authority = end < 0 ? rest : rest.slice(0, end);
  const tail = end < 0 ? "" : rest.slice(end);
  if (authority.includes("@")) return "userinfo";
  if (/%(?![0-9A-Fa-f]{2})/.test(u)) return "percent";
  const colon = authority.lastIndexOf(":");
  const split = colon > authority.lastIndexOf("]");
  const host = split ? authority.slice(0, colon) : authority;
  const port = split ? authority.slice(colon + 1) : "";
  if (host == "") return "host";
  if (host[0] == "[") {
    if (host[host.length - 1] != "]" || !ipv6(host.slice(1, -1))) return "host";
  } else {
    if (!HOST_CHARS.test(host)) return "host";
    const name = host.endsWith(".") ? host.slice(0, -1) : host;
    const last = name.slice(name.lastIndexOf(".") + 1);
    if ((/^[0-9]+$/.test(last) || /^0x/i.test(last)) && !ipv4(host)) return "host";
    if (host.toLowerCase().split(".").some((l) => l.startsWith("xn--") && !aceLabelOK(l))) return "host";
  }
  if (!/^[0-9]*$/.test(port) || +port > 65535) return "port";
  const hash = tail.indexOf("#");
  const beforeHash = hash < 0 ? tail : tail.slice(0, hash);
  const fragment = hash < 0 ? "" : tail.slice(hash + 1);
  const q = beforeHash.indexOf("?");
  const path = q < 0 ? beforeHash : beforeHash.slice(0, q);
  const query = q < 0 ? "" : beforeHash.slice(q + 1);
  if (!PATH_CHARS.test(path) || !QUERY_CHARS.test(query) || !QUERY_CHARS.test(fragment)) return "char";
};
export const urlReadIdentically = (f, out, field, ids) => {
  if (typeof f[field] != "string") return;
  const problem = urlProblem(f[field]);
  if (problem) out.push({ path: ptr("", field), rule: ids[problem] });
};

// ---- acceptors: yes or no, for the runtime -------------------------------------
// Each combinator returns a predicate; bounds left out are not checked
// (n < undefined and n > undefined are false). aStruct's fields list the
// required ones first, then says how many are required; a condition
// [when, accept] applies accept when when (an aStruct requiring each of the
// condition's fields with its value) holds.

export const within = (n, lo, hi) => !(n < lo || n > hi);
export const length = (s) => [...s].length; // in code points
export const aText = (v) => typeof v == "string";
export const aString = (lo, hi, re) => (v) => aText(v) && within([...v].length, lo, hi) && (!re || re.test(v)); // length in code points
export const anInteger = (lo, hi) => (v) => Number.isInteger(v) && within(v, lo, hi);
export const aNumber = (lo, hi) => (v) => typeof v == "number" && within(v, lo, hi);
export const aBoolean = (v) => typeof v == "boolean";
export const aScalar = (v) => v === null || typeof v != "object";
export const anything = () => true;
export const oneOf = (values) => (v) => values.includes(v);
// item is an acceptor, which takes one argument: every() passes it more.
export const anArray = (item, lo, hi) => (v) => Array.isArray(v) && within(v.length, lo, hi) && v.every(item);
export const aMap = (value, most) => (v) => isObject(v) && within((v = Object.values(v)).length, 0, most) && v.every(value);
// aKeyedMap is aMap with its keys' length bounds (propertyNames): no frame
// the host sends has them today, so no runtime carries it.
export const aKeyedMap = (value, most, keyLo, keyHi) => (v) => aMap(value, most)(v) && Object.keys(v).every((k) => within(length(k), keyLo, keyHi));
// aStruct: fields maps each field to its acceptor, the first `required`
// of them required; each condition [when, accept] applies accept to the
// whole object when it passes when (gen/js whenAcceptor; accept is an
// aStruct of the fields it requires and pins, gen/js condAcceptor).
export const aStruct = (fields, required, conds = []) => (v) =>
  isObject(v) &&
  Object.keys(fields).every((k, i) => (has(v, k) ? fields[k](v[k]) : i >= required)) &&
  conds.every(([when, accept]) => !when(v) || accept(v));
