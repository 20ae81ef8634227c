// checkFrame: the verdict a host reaches on one frame, the same object
// `snuggen check frame` prints. It applies R1 (version, requestId recovery),
// R2 (unknown snug:* types are ignored), R6 (size class by type), the
// schemas and the refinements, and builds the answer a host sends back.
// This is the schema-independent half, written by hand; what the schemas and
// rules.json decide (the frame rules, the per-type table of validators, size
// classes and answer types, the refusal) is read from the generated
// ../gen/check.mjs and ../gen/constants.mjs. Keep it in step with
// frame/parse.go: the conformance vectors and the differential test hold both
// to one verdict.

import {
  CODE_MALFORMED,
  MAX_JSON_DEPTH,
  PROTOCOL_VERSIONS,
  RECOVER_MAX_LENGTH,
  RECOVER_MIN_LENGTH,
  RETRYABLE_CODES,
  VERSION,
} from "../gen/constants.mjs";
import {
  ANSWER_MESSAGE_MAX,
  DEFAULT_ANSWER,
  FRAME_RULES,
  FRAMES,
  RECOVER_FIELD,
  REFINEMENT_MESSAGES,
  REFUSAL,
  REFUSING_TYPES,
} from "../gen/check.mjs";

const knownFrame = (type) => (typeof type == "string" && Object.hasOwn(FRAMES, type) ? FRAMES[type] : undefined);

const isObject = (value) => value !== null && typeof value == "object" && !Array.isArray(value);
const codePoints = (text) => [...text].length;

// utf8Length is the byte length of text encoded as UTF-8.
const utf8Length = (text) => new TextEncoder().encode(text).length;

// Where a JSON text names one key twice: nowhere, only below the top-level v
// and type (an unknown type is still ignored, R2), at v (the frame has no
// single reading), or at type (nor a type: the answer is the default one).
// TOO_DEEP: arrays and objects nest deeper than MAX_JSON_DEPTH, which a
// host's decoder (internal/jsonscan) refuses as no JSON it reads.
const DUP_NONE = 0;
const DUP_INNER = 1;
const DUP_HEADER = 2;
const DUP_TYPE = 3;
const TOO_DEEP = 4;

// duplicateAt is the finding for a key named twice in an object at depth
// (1: the frame itself).
const duplicateAt = (depth, key) => {
  if (depth > 1) return DUP_INNER;
  if (key == "type") return DUP_TYPE;
  if (key == "v") return DUP_HEADER;
  return DUP_INNER;
};

// duplicates scans JSON text (already known to parse) for an object that
// names one key twice, anywhere: JSON.parse silently keeps the last, a host
// rejects the frame. It reads the whole text: TOO_DEEP comes first, then
// DUP_TYPE, DUP_HEADER and DUP_INNER.
function duplicates(text) {
  const stack = []; // per open object its keys, per open array null
  let expectKey = false;
  let found = DUP_NONE;
  for (const [token] of text.matchAll(/"[^"\\]*(?:\\.[^"\\]*)*"|[{}[\],]/g)) {
    const first = token[0];
    if (first == '"') {
      if (expectKey) {
        const keys = stack[stack.length - 1];
        // An unpaired surrogate escape reads as U+FFFD, as a host's decoder
        // reads it ("\ud800" and "\udfff" name one key there).
        const key = JSON.parse(token).toWellFormed();
        if (keys.has(key)) found = Math.max(found, duplicateAt(stack.length, key));
        keys.add(key);
        expectKey = false;
      }
    } else if (first == "{" || first == "[") {
      stack.push(first == "{" ? new Set() : null);
      if (stack.length > MAX_JSON_DEPTH) return TOO_DEEP;
      expectKey = first == "{";
    } else if (first == "}" || first == "]") {
      stack.pop();
    } else {
      expectKey = stack[stack.length - 1] != null; // a comma: in an object, a key follows
    }
  }
  return found;
}

// jsonText is JSON.stringify(value) without recursion, so a value nested
// deeper than the stack (a state 5,000 arrays deep) still has its text:
// members that are undefined, functions or symbols are left out (null in an
// array), toJSON is honoured, non-finite numbers are null. It throws a
// TypeError where JSON.stringify does (a cycle, a BigInt) and returns
// undefined when the value itself has no JSON text.
function jsonText(value) {
  const out = [];
  const open = new Set(); // the objects being written, for cycles
  const work = [["", value, null]]; // [key, value, container state] or a closing object
  while (work.length) {
    const item = work.pop();
    if (!Array.isArray(item)) {
      open.delete(item.done);
      out.push(item.close);
      continue;
    }
    let [key, member, container] = item;
    if (member !== null && (typeof member == "object" || typeof member == "bigint") && typeof member.toJSON == "function") {
      member = member.toJSON(key);
    }
    if (member instanceof Number || member instanceof String || member instanceof Boolean) member = member.valueOf();
    const kind = typeof member;
    const skip = member === undefined || kind == "function" || kind == "symbol";
    if (skip && container && !container.array) continue;
    if (container) {
      const comma = container.written++ ? "," : "";
      out.push(comma + (container.array ? "" : JSON.stringify(key) + ":"));
    }
    if (skip) {
      if (!container) return undefined;
      out.push("null");
    } else if (kind == "bigint") {
      throw new TypeError("a BigInt has no JSON text");
    } else if (member === null || kind != "object") {
      out.push(kind == "number" && !Number.isFinite(member) ? "null" : JSON.stringify(member));
    } else {
      if (open.has(member)) throw new TypeError("a cycle has no JSON text");
      open.add(member);
      const array = Array.isArray(member);
      const inner = { written: 0, array };
      out.push(array ? "[" : "{");
      work.push({ done: member, close: array ? "]" : "}" });
      const members = array
        ? Array.from(member, (element, index) => [String(index), element, inner])
        : Object.keys(member).map((name) => [name, member[name], inner]);
      for (let i = members.length - 1; i >= 0; i--) work.push(members[i]);
    }
  }
  return out.join("");
}

// answerFor is the answer to a rejected request, as Go's RejectError.Answer
// builds it: an answer type without an error seat refuses with
// "CODE: message" as its reason, cut to the reason's maxLength.
function answerFor(type, requestId, code, message) {
  if (Object.hasOwn(REFUSING_TYPES, type)) {
    const reason = [...`${code}: ${message}`];
    const max = REFUSING_TYPES[type] || reason.length;
    return { v: VERSION, type, requestId, [REFUSAL.field]: REFUSAL.value, [REFUSAL.reasonField]: reason.slice(0, max).join("") };
  }
  return {
    v: VERSION,
    type,
    requestId,
    ok: false,
    error: { code, message, retryable: RETRYABLE_CODES.includes(code) },
  };
}

// summary lists up to most violations sorted by path, then rule, the way the Go
// RejectError does.
function summary(errors, most) {
  const sorted = [...errors].sort(byPathThenRule);
  const parts = sorted.slice(0, most).map((error) => `${error.path || "/"}: ${error.message} (${error.rule})`);
  if (sorted.length > most) parts.push(`and ${sorted.length - most} more`);
  return parts.join("; ");
}

// compare orders two strings as < does.
const compare = (left, right) => {
  if (left < right) return -1;
  if (left > right) return 1;
  return 0;
};
const byPathThenRule = (left, right) => compare(left.path, right.path) || compare(left.rule, right.rule);

// answerMessage is the error message of the answer: three violations at
// most, cut to the error schema's message maxLength in code points with an
// ellipsis as the last one.
function answerMessage(errors) {
  const message = summary(errors, 3);
  const points = [...message];
  return points.length > ANSWER_MESSAGE_MAX ? points.slice(0, ANSWER_MESSAGE_MAX - 1).join("") + "…" : message;
}

function reject(frame, frameType, errors) {
  const code = errors[0].code;
  // The last occurrence of a repeated key is the value, as in JSON.parse.
  const id = isObject(frame) && Object.hasOwn(frame, RECOVER_FIELD) ? frame[RECOVER_FIELD] : undefined;
  const length = typeof id == "string" ? codePoints(id) : -1;
  // An id with an unpaired surrogate is not plausible: a host reads it as
  // U+FFFD, so no answer could echo it.
  const requestId = length >= RECOVER_MIN_LENGTH && length <= RECOVER_MAX_LENGTH && id.isWellFormed() ? id : null;
  const known = knownFrame(frameType);
  const answerType = (known && known[2]) || DEFAULT_ANSWER;
  return {
    verdict: "reject",
    code,
    requestId,
    answer: requestId === null ? null : answerFor(answerType, requestId, code, answerMessage(errors)),
    errors: errors.map(({ path, rule, message }) => ({ path, rule, message })),
  };
}

const frameError = (id, path = "") => ({ path, rule: id, code: FRAME_RULES[id][0], message: FRAME_RULES[id][1] });

/**
 * Checks one frame the way a host does. It never throws: input that has no
 * JSON text (a cycle, a BigInt, undefined) is rejected as not JSON.
 * @param {unknown} input the frame: its JSON text as a string, or a value,
 *   checked as its JSON text (JSON.stringify's: an undefined member is absent)
 * @returns {import("./frames").Verdict} accept, ignore (R2), or reject with
 *   the code, the recovered requestId, the answer a host sends, and the errors
 */
export function checkFrame(input) {
  let text = input;
  if (typeof input != "string") {
    try {
      text = jsonText(input);
    } catch {
      text = undefined;
    }
  }
  let frame;
  try {
    frame = JSON.parse(text);
  } catch {
    return reject(undefined, undefined, [frameError("frame.json")]);
  }
  if (!isObject(frame)) return reject(frame, undefined, [frameError("frame.json")]);
  const duplicate = duplicates(text);
  if (duplicate == TOO_DEEP) return reject(undefined, undefined, [frameError("frame.json")]);
  // A frame that names type twice has no type (Go reads the first, JSON.parse
  // the last): its answer is the default one.
  const type = typeof frame.type == "string" && duplicate != DUP_TYPE ? frame.type : undefined;
  // A key twice comes before every other frame rule, but R2 ignores an
  // unknown type with a valid v whatever its other keys hold.
  const fail = (id, path) =>
    reject(frame, type, [frameError(duplicate == DUP_NONE ? id : "frame.duplicate-key", duplicate == DUP_NONE ? path : "")]);
  if (duplicate >= DUP_HEADER) return fail("frame.duplicate-key");
  if (!Number.isInteger(frame.v)) return fail("frame.version", "/v");
  if (!PROTOCOL_VERSIONS.includes(frame.v)) return fail("frame.unsupported-version", "/v");
  if (type === undefined) return fail("frame.type", "/type");
  const known = knownFrame(type);
  if (!known) return { verdict: "ignore", type };
  if (duplicate != DUP_NONE) return fail("frame.duplicate-key");
  if (utf8Length(text) > known[1]) return fail("frame.size");
  const id = frame[RECOVER_FIELD];
  if (Object.hasOwn(frame, RECOVER_FIELD) && typeof id == "string" && !id.isWellFormed())
    return fail("frame.request-id", "/" + RECOVER_FIELD);
  const violations = known[0](frame);
  if (violations.length == 0) return { verdict: "accept", type };
  return reject(
    frame,
    type,
    // A schema violation carries its message; a refinement's is in rules.json.
    violations.map((violation) => ({ ...violation, code: CODE_MALFORMED, message: violation.message ?? REFINEMENT_MESSAGES[violation.rule] })),
  );
}
