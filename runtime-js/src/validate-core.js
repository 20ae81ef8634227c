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

export const isObject = (value) => typeof value == "object" && !!value && !Array.isArray(value);
const has = Object.hasOwn;
const codePoints = (text) => {
  let count = 0;
  for (const _ of text) count++;
  return count;
};
// pointer is path with key appended as a JSON Pointer token.
const pointer = (path, key) => path + "/" + String(key).replace(/~/g, "~0").replace(/\//g, "~1");
const KIND_NAMES = { s: "string", i: "integer", n: "number", b: "boolean", a: "array", x: "scalar", o: "object", m: "object", r: "object" };
const json = (value) => JSON.stringify(value);

// say is the message of a keyword (rules.json messages), its {names} filled
// from vars: the same words the Go validator says.
const say = (key, vars = {}) => MESSAGES[key].replace(/\{(\w+)\}/g, (placeholder, name) => vars[name]);
const shorter = (limit) => say(limit == 1 ? "minLength1" : "minLength", { limit });

// hasKind reports whether value is of the descriptor kind's JSON type.
const hasKind = (kind, value) => {
  switch (kind) {
    case "s":
      return typeof value == "string";
    case "i":
      return Number.isInteger(value);
    case "n":
      return typeof value == "number";
    case "b":
      return typeof value == "boolean";
    case "a":
      return Array.isArray(value);
    case "x":
      return value === null || typeof value != "object";
    case "*":
      return true;
  }
  return isObject(value);
};

// walk checks value, at path, against one descriptor; bad records a
// violation (at the value's path unless given).
const walk = (descriptor, value, path, out, top) => {
  const type = typeof descriptor == "string" ? { k: descriptor } : descriptor;
  const bad = (rule, message, at = path) => out.push({ path: at, rule, message });
  if (!hasKind(type.k, value)) return bad("type", say("type", { type: TYPE_NAMES[KIND_NAMES[type.k]] }));
  if (type.c !== undefined && value !== type.c) bad("const", say("const", { value: json(type.c) }));
  if (type.e && !type.e.includes(value)) bad("enum", say("enum", { values: type.e.join(", ") }));
  if (type.k == "s" && (type.n || type.x)) {
    const length = codePoints(value);
    if (length < type.n) bad("minLength", shorter(type.n));
    if (length > type.x) bad("maxLength", say("maxLength", { limit: type.x }));
  }
  if (type.p && !type.p.test(value)) bad("pattern", say("pattern", { pattern: type.p.source }));
  // Only a number is compared: < on an object would call its toString or
  // valueOf member (a payload may hold one) or join a deep array.
  if (typeof value == "number") {
    if (value < type.lo) bad("minimum", say("minimum", { limit: type.lo }));
    if (value > type.hi) bad("maximum", say("maximum", { limit: type.hi }));
  }
  if (type.k == "a") walkArray(type, value, path, out, bad);
  if (type.k == "o" || type.k == "m" || type.k == "r") {
    if (Object.keys(value).length > type.xp) bad("maxProperties", say("maxProperties", { limit: type.xp }));
  }
  if (type.k == "m") walkMap(type, value, path, out, bad);
  if (type.k == "o") walkObject(type, value, path, out, bad, top);
};

const walkArray = (type, items, path, out, bad) => {
  if (items.length < type.ni) bad("minItems", say("minItems", { limit: type.ni }));
  if (items.length > type.xi) bad("maxItems", say("maxItems", { limit: type.xi }));
  if (type.t) items.forEach((item, index) => walk(type.t, item, pointer(path, index), out));
};

const walkMap = (type, map, path, out, bad) => {
  for (const key of Object.keys(map)) {
    const length = codePoints(key);
    if (length < type.kn) bad("propertyNames", shorter(type.kn), pointer(path, key));
    if (length > type.kx) bad("propertyNames", say("maxLength", { limit: type.kx }), pointer(path, key));
    if (type.t) walk(type.t, map[key], pointer(path, key), out);
  }
};

const walkObject = (type, object, path, out, bad, top) => {
  for (const name in type.f) {
    if (has(object, name)) walk(type.f[name], object[name], pointer(path, name), out);
    else if (type.q?.includes(name)) bad("required", say("required"), pointer(path, name));
  }
  if (type.s) {
    for (const key of Object.keys(object)) {
      // v and type of a frame are checked before (checkFrame).
      const header = top && (key == "v" || key == "type");
      if (!has(type.f, key) && !header) bad("additionalProperties", say("additionalProperties"), pointer(path, key));
    }
  }
  for (const [condition, names, pins = {}] of type.w || []) {
    if (!holds(condition, object)) continue;
    const whenWords = Object.keys(condition).map((field) => say("when", { field, value: json(condition[field]) }));
    const when = { when: whenWords.join(MESSAGES.whenJoin) };
    for (const name of names) {
      if (!has(object, name)) bad("required", say("requiredWhen", when), pointer(path, name));
    }
    for (const name in pins) {
      if (has(object, name) && object[name] !== pins[name]) {
        bad("const", say("constWhen", { ...when, value: json(pins[name]) }), pointer(path, name));
      }
    }
  }
};

// holds reports whether every field of condition is in object with its
// value (a string or a boolean: no inherited member of an object is one).
const holds = (condition, object) => Object.keys(condition).every((field) => object[field] === condition[field]);

// run validates a frame against its descriptor: the violations of the
// first stage that has any, else those of the refinements.
export function run(descriptor, frame, refine) {
  const out = [];
  walk(descriptor, frame, "", out, true);
  if (out.length) {
    const first = Math.min(...out.map((violation) => RULE_STAGES[violation.rule]));
    return out.filter((violation) => RULE_STAGES[violation.rule] == first);
  }
  // Refinements run only on a frame that passed every schema stage.
  if (refine) refine(frame, out);
  return out;
}

// ---- refinements (rules.json) ------------------------------------------------

// Field must be absent when frame[when] is one of values.
export const forbidWhen = (frame, out, rule, field, when, values) => {
  if (has(frame, field) && values.includes(frame[when])) out.push({ path: pointer("", field), rule });
};

// No key of the map frame[field] is in list.
export const keysNotIn = (frame, out, rule, field, list, fold) => {
  for (const key in frame[field] || {}) {
    if (list.includes(fold ? key.toLowerCase() : key)) out.push({ path: pointer(pointer("", field), key), rule });
  }
};

// Keys of the map frame[field] are unique (case-insensitively when fold):
// every key that collides with another is named, as in Go.
export const keysUnique = (frame, out, rule, field, fold) => {
  const count = new Map();
  const norm = (key) => (fold ? key.toLowerCase() : key);
  for (const key in frame[field] || {}) count.set(norm(key), (count.get(norm(key)) || 0) + 1);
  for (const key in frame[field] || {}) {
    if (count.get(norm(key)) > 1) out.push({ path: pointer(pointer("", field), key), rule });
  }
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
const ipv4 = (host) => {
  const parts = host.split(".");
  return parts.length == 4 && parts.every((part) => DEC_OCTET.test(part));
};
const ipv6 = (address) => {
  const halves = address.split("::");
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
// decodes to a non-ASCII, NFKC, lower-case label of the ACE_CATEGORIES,
// with no mark first, and right-to-left only as a whole (aceLabelOK).
// The label classes are built on first use: the runtime bundles these modules for the acceptors
// alone, and esbuild keeps a top-level `new RegExp` (it cannot know it is
// pure), with the two tables it reads: some 300 B min+gzip of every app.
let ACE_CHARS, RTL_CHAR, RTL_LABEL;
const labelClasses = () => {
  if (ACE_CHARS) return;
  const ace = "[" + ACE_CATEGORIES.map((category) => "\\p{" + category + "}").join("") + "-]";
  const rtl = "[" + RTL_SCRIPTS.map((script) => "\\p{Script=" + script + "}").join("") + "]";
  ACE_CHARS = new RegExp("^" + ace + "+$", "u");
  RTL_CHAR = new RegExp(rtl, "u");
  RTL_LABEL = new RegExp("^(?:(?=" + rtl + ")\\p{L})(?:(?=" + rtl + ")\\p{L}|\\p{M})*$", "u");
};
// RFC 3492's parameters: base 36, tmin 1, tmax 26, skew 38, damp 700,
// initial bias 72 and n 128; PC_MAX is the largest value an int32 holds.
const PC_MAX = 2147483647;
// pcDigit is the value of a Punycode digit's char code, -1 for none.
const pcDigit = (code) => {
  if (code >= 48 && code <= 57) return code - 22; // 0-9 are 26-35
  if (code >= 97 && code <= 122) return code - 97; // a-z
  if (code >= 65 && code <= 90) return code - 65; // A-Z
  return -1;
};
const pcAdapt = (delta, points, first) => {
  delta = first ? Math.floor(delta / 700) : delta >> 1;
  delta += Math.floor(delta / points);
  let offset = 0;
  while (delta > 455) {
    delta = Math.floor(delta / 35);
    offset += 36;
  }
  return offset + Math.floor((36 * delta) / (delta + 38));
};
// punycodeDecode is RFC 3492's decoder, with its names spelled out: undefined
// for input it refuses.
const punycodeDecode = (input) => {
  const out = [];
  const basicEnd = input.lastIndexOf("-");
  if (basicEnd > 0) {
    for (let j = 0; j < basicEnd; j++) out.push(input.charCodeAt(j));
    input = input.slice(basicEnd + 1);
  }
  let codePoint = 128;
  let index = 0;
  let bias = 72;
  for (let pos = 0; pos < input.length; ) {
    const oldIndex = index;
    for (let w = 1, k = 36; ; k += 36) {
      if (pos >= input.length) return undefined;
      const digit = pcDigit(input.charCodeAt(pos++));
      if (digit < 0 || digit > Math.floor((PC_MAX - index) / w)) return undefined;
      index += digit * w;
      const threshold = Math.min(Math.max(k - bias, 1), 26);
      if (digit < threshold) break;
      if (w > Math.floor(PC_MAX / (36 - threshold))) return undefined;
      w *= 36 - threshold;
    }
    const length = out.length + 1;
    bias = pcAdapt(index - oldIndex, length, oldIndex == 0);
    if (Math.floor(index / length) > PC_MAX - codePoint) return undefined;
    codePoint += Math.floor(index / length);
    index %= length;
    if (codePoint < 128 || codePoint > 0x10ffff || (codePoint >= 0xd800 && codePoint <= 0xdfff)) return undefined;
    out.splice(index, 0, codePoint);
    index++;
  }
  return String.fromCodePoint(...out);
};
const aceLabelOK = (label) => {
  const decoded = punycodeDecode(label.slice(4));
  labelClasses();
  return (
    !!decoded &&
    /[^\0-\x7f]/.test(decoded) &&
    !decoded.startsWith("xn--") &&
    decoded.normalize("NFKC") == decoded &&
    decoded.toLowerCase() == decoded &&
    ACE_CHARS.test(decoded) &&
    !/^\p{M}/u.test(decoded) &&
    (!RTL_CHAR.test(decoded) || RTL_LABEL.test(decoded))
  );
};
// hostProblem is "host" when an https URL's host is not read the same by
// both parsers.
const hostProblem = (host) => {
  if (host == "") return "host";
  if (host[0] == "[") {
    if (host[host.length - 1] != "]" || !ipv6(host.slice(1, -1))) return "host";
    return undefined;
  }
  if (!HOST_CHARS.test(host)) return "host";
  const name = host.endsWith(".") ? host.slice(0, -1) : host;
  const last = name.slice(name.lastIndexOf(".") + 1);
  if ((/^[0-9]+$/.test(last) || /^0x/i.test(last)) && !ipv4(host)) return "host";
  if (host.toLowerCase().split(".").some((label) => label.startsWith("xn--") && !aceLabelOK(label))) return "host";
  return undefined;
};
// cut splits text at the first of separator: the part before it and the
// part after it ("" when there is none).
const cut = (text, separator) => {
  const at = text.indexOf(separator);
  return at < 0 ? [text, ""] : [text.slice(0, at), text.slice(at + 1)];
};
const urlProblem = (url) => {
  if (!URL_CHARS.test(url)) return "char";
  if (!/^https:\/\//i.test(url)) return "scheme";
  const rest = url.slice(8);
  const end = rest.search(/[/?#]/);
  const authority = end < 0 ? rest : rest.slice(0, end);
  const tail = end < 0 ? "" : rest.slice(end);
  if (authority.includes("@")) return "userinfo";
  if (/%(?![0-9A-Fa-f]{2})/.test(url)) return "percent";
  const colon = authority.lastIndexOf(":");
  const hasPort = colon > authority.lastIndexOf("]");
  const host = hasPort ? authority.slice(0, colon) : authority;
  const port = hasPort ? authority.slice(colon + 1) : "";
  const problem = hostProblem(host);
  if (problem) return problem;
  if (!/^[0-9]*$/.test(port) || +port > 65535) return "port";
  const [beforeHash, fragment] = cut(tail, "#");
  const [path, query] = cut(beforeHash, "?");
  if (!PATH_CHARS.test(path) || !QUERY_CHARS.test(query) || !QUERY_CHARS.test(fragment)) return "char";
  return undefined;
};
export const urlReadIdentically = (frame, out, field, ids) => {
  if (typeof frame[field] != "string") return;
  const problem = urlProblem(frame[field]);
  if (problem) out.push({ path: pointer("", field), rule: ids[problem] });
};

// ---- acceptors: yes or no, for the runtime -------------------------------------
// Each combinator returns a predicate; bounds left out are not checked
// (n < undefined and n > undefined are false). aStruct's fields list the
// required ones first, then says how many are required; a condition
// [when, accept] applies accept when when (an aStruct requiring each of the
// condition's fields with its value) holds.

export const within = (number, lo, hi) => !(number < lo || number > hi);
export const length = (text) => [...text].length; // in code points
export const aText = (value) => typeof value == "string";
// aString's length is in code points.
export const aString = (lo, hi, pattern) => (value) => aText(value) && within([...value].length, lo, hi) && (!pattern || pattern.test(value));
export const anInteger = (lo, hi) => (value) => Number.isInteger(value) && within(value, lo, hi);
export const aNumber = (lo, hi) => (value) => typeof value == "number" && within(value, lo, hi);
export const aBoolean = (value) => typeof value == "boolean";
export const aScalar = (value) => value === null || typeof value != "object";
export const anything = () => true;
export const oneOf = (values) => (value) => values.includes(value);
// acceptItem is an acceptor, which takes one argument: every() passes it more.
export const anArray = (acceptItem, lo, hi) => (value) => Array.isArray(value) && within(value.length, lo, hi) && value.every(acceptItem);
export const aMap = (acceptValue, most) => (value) => {
  if (!isObject(value)) return false;
  const values = Object.values(value);
  return within(values.length, 0, most) && values.every(acceptValue);
};
// aKeyedMap is aMap with its keys' length bounds (propertyNames): no frame
// the host sends has them today, so no runtime carries it.
export const aKeyedMap = (acceptValue, most, keyLo, keyHi) => (value) =>
  aMap(acceptValue, most)(value) && Object.keys(value).every((key) => within(length(key), keyLo, keyHi));
// aStruct: fields maps each field to its acceptor, the first `required`
// of them required; each condition [when, accept] applies accept to the
// whole object when it passes when (gen/js whenAcceptor; accept is an
// aStruct of the fields it requires and pins, gen/js condAcceptor).
export const aStruct = (fields, required, conditions = []) => (value) =>
  isObject(value) &&
  Object.keys(fields).every((name, index) => (has(value, name) ? fields[name](value[name]) : index >= required)) &&
  conditions.every(([when, accept]) => !when(value) || accept(value));
