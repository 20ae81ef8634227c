// The conformance cases, in the order they run. Each is named by a rule id
// of rules.json's normativeRules (the generated RULE_* constants); what a
// host must answer to a frame the reference rejects is computed by the
// generated checkFrame, never written here, and its rule id is reported.
//
// raw: the case posts frames itself (skipped under MCP Apps, which carries
// no Snug frames). needs: a capability the host must advertise, else skip.

import {
  CODE_CANCELLED,
  CODE_DB_IMPORT_INVALID,
  CODE_DB_SQL_ERROR,
  CODE_MALFORMED,
  CODE_NET_SCHEME_BLOCKED,
  CODE_NET_SSRF_BLOCKED,
  CODE_PARSE_FAILED,
  CODE_SUPERSEDED,
  ERROR_CODE_MAX_LENGTH,
  ERROR_MESSAGE_MAX_LENGTH,
  EVENT_SPECS,
  EVENT_THEME_CHANGE,
  HOST_READY_LOCALE_MAX_LENGTH,
  MAX_ARTIFACT_BYTES,
  MAX_DB_FRAME_BYTES,
  MAX_FRAME_BYTES,
  MAX_NET_FRAME_BYTES,
  METHOD_GET,
  METHOD_POST,
  NET_REQUEST_BODY_MAX_LENGTH,
  OP_EXEC,
  OP_KV_GET,
  OP_KV_SET,
  OPEN_URL_REQUEST_URL_MAX_LENGTH,
  OPEN_URL_RESULT_REASON_MAX_LENGTH,
  PROTOCOL_VERSIONS,
  RECOVER_MAX_LENGTH,
  RETRYABLE_CODES,
  RULE_C1,
  RULE_C2,
  RULE_DB,
  RULE_HANDSHAKE,
  RULE_NET,
  RULE_OPEN_URL,
  RULE_R1,
  RULE_R2,
  RULE_R3,
  RULE_R4,
  RULE_R5,
  RULE_R6,
  RULE_R7,
  RULE_SAVE_FILE,
  STATUS_DECLINED,
  STATUS_OPENED,
  STATUS_REFUSED,
  STATUS_SAVED,
  SAVE_FILE_REQUEST_DATA_MAX_LENGTH,
  SAVE_FILE_RESULT_REASON_MAX_LENGTH,
  STRIP_HEADERS,
  TYPE_APP_ANNOUNCE,
  TYPE_APP_CANCEL,
  TYPE_APP_MESSAGE,
  TYPE_APP_RESPONSE,
  TYPE_DB_REQUEST,
  TYPE_HOST_EVENT,
  TYPE_HOST_READY,
  TYPE_NET_REQUEST,
  TYPE_OPEN_URL_REQUEST,
  TYPE_OPEN_URL_RESULT,
  TYPE_SAVE_FILE_REQUEST,
  VERSION,
  isKnownCode,
} from "./gen/constants.mjs";
import { checkFrame } from "./src/check.js";
import { HOST_TO_APP, validateError, validateHostReady, validateTheme } from "./gen/validate.mjs";
import { ask, env } from "./state.js";
import { c2Network, c2Parent, c2Storage, c2WebRTC } from "./probes.js";
import {
  ANSWER_MS,
  answer,
  fence,
  framesFor,
  framesSince,
  isFrame,
  isTerminal,
  log,
  newId,
  next,
  post,
  unexpectedSince,
} from "./wire.js";

export const cases = [];
const add = (id, rule, title, opts, run) => cases.push({ id, rule, title, ...opts, run });

// ---- helpers ---------------------------------------------------------------

const json = (v) => {
  const s = JSON.stringify(v);
  return s && s.length > 200 ? s.slice(0, 199) + "…" : s;
};

/** A one-line description of a frame the host sent. */
export function brief(f) {
  if (!isFrame(f)) return json(f);
  const id = typeof f.requestId == "string" ? ` requestId ${json(f.requestId)}` : "";
  if (typeof f.status == "string") return `${f.type} ${f.status}${f.reason ? ` (${f.reason})` : ""}${id}`;
  if (f.type == TYPE_HOST_READY) return `${f.type} instanceId ${f.instanceId}`;
  if (f.type == TYPE_HOST_EVENT) return `${f.type} ${f.event} ${json(f.data)}`;
  if (f.ok === false) return `${f.type} ok:false ${f.error?.code}${id}`;
  if (f.streaming) return `${f.type} streaming${id}`;
  return `${f.type} ok:${f.ok}${id}`;
}

const instanceId = () => env.host.instanceId;

/**
 * A requestId R1 must recover and echo exactly: RECOVER_MAX_LENGTH code
 * points, with an astral character, a quote, a backslash, a decomposed
 * accent (e + U+0301: a host that normalizes to NFC changes it) and mixed
 * case.
 */
function plausibleId(label) {
  const head = [...`${newId(label)}-Ée\u0301"\\😀漢-Aa`];
  while (head.length < RECOVER_MAX_LENGTH) head.push("z");
  return head.slice(0, RECOVER_MAX_LENGTH).join("");
}

/** The JSON text's size in UTF-8 bytes, as R6 counts it. */
const bytes = (v) => new Blob([JSON.stringify(v)]).size;

/**
 * pad sets a padding string through set so the frame is exactly n bytes:
 * the padding is ASCII, one byte a character, never escaped, so the
 * frame's size without it says how long it must be.
 */
function pad(frame, set, n) {
  set(frame, "");
  const base = bytes(frame);
  if (base > n) throw new Error(`kit: the frame is ${base} bytes before padding, over ${n}`);
  set(frame, "a".repeat(n - base));
  return frame;
}

/**
 * sub is a context for one part of a case: its failures and what it saw are
 * collected, to be reported by the case under a prefix.
 */
const sub = (t) => {
  const s = { fails: [], got: "", expect() {}, saw: (x) => (s.got = x), rule: (r) => t.rule(r), note() {}, ok: (c, r) => (c ? true : (s.fails.push(r), false)), fail: (r) => s.fails.push(r), noDialogs() {} };
  return s;
};

/** The runtime's API call, with the host's error recorded for R5. */
async function call(p) {
  try {
    return { ok: true, value: await p };
  } catch (e) {
    // A refused open-url or save-file rejects with the host's reason: a
    // refusal, not a host error object (R5 judges those).
    if (e?.name == "SnugError" && e.reason === undefined) env.apiErrors.push({ code: e.hostCode ?? e.code, message: e.message, retryable: e.retryable, attemptsRemaining: e.attemptsRemaining });
    return { ok: false, error: e };
  }
}

const codeOf = (r) => (r.ok ? "ok" : r.error?.hostCode ?? r.error?.code ?? String(r.error));

/**
 * rejected posts a frame the reference checker rejects and checks the
 * host's answer against the reference's: the paired answer type and code
 * with the requestId echoed exactly when one is recovered, else nothing.
 */
async function rejected(t, frame, text, verdict) {
  const v = verdict ?? checkFrame(text ?? frame);
  if (v.verdict != "reject") throw new Error(`kit: the reference does not reject ${json(frame)} (${v.verdict})`);
  t.rule(v.errors[0]?.rule);
  if (v.answer === null) {
    t.expect(`nothing comes back (${v.code}, no plausible requestId to answer)`);
    const from = log.length;
    post(frame);
    if (!(await fence())) t.note("the fence (an R1 answer) never came; waited 5 s instead");
    const extra = unexpectedSince(from);
    t.saw(extra.length ? `answered: ${extra.map(brief).join(", ")}` : "nothing");
    t.ok(extra.length == 0, `the host answered a frame it cannot answer (R1: never without a recovered requestId): ${brief(extra[0])}`);
    return;
  }
  const want = v.answer;
  const refusal = typeof want.status == "string"; // open-url, save-file: refused with the code in the reason
  t.expect(`${want.type} ${refusal ? `${want.status}, reason ${v.code}` : `ok:false ${v.code}`}, requestId echoed exactly`);
  // The answer, or nothing a second after the answer of a fence posted
  // behind the frame: R1 answers come from the frame layer at once, so that
  // is a drop. A fence not answered in time says the host is slow (a large
  // frame on a loaded machine), not that it dropped anything: then the
  // answer has its whole wait.
  const from = log.length;
  post(frame);
  const isAnswer = (m) => isFrame(m.data) && m.data.requestId === frame.requestId && isTerminal(m.data);
  const fenced = fence().then((answered) => (answered ? next(isAnswer, 1000, from) : new Promise(() => {})));
  const m = await Promise.race([next(isAnswer, ANSWER_MS, from), fenced]);
  const terminal = m && m.data;
  if (!terminal) {
    // An answer with another requestId is an unechoed id; none is a drop.
    const near = framesSince(from).filter((f) => f.type == want.type && f.requestId !== frame.requestId && !String(f.requestId).startsWith("conform-fence-"));
    t.saw(near.length ? near.map(brief).join(", ") : "no answer (a fence posted after it was answered)");
    t.fail(near.length ? `the answer does not echo the requestId exactly (sent ${json(frame.requestId)})` : "no answer: the frame was dropped");
    return;
  }
  t.saw(brief(terminal));
  t.ok(terminal.type == want.type, `answered with ${terminal.type}, not the paired ${want.type}`);
  if (refusal) {
    t.ok(terminal.status == STATUS_REFUSED && String(terminal.reason ?? "").startsWith(v.code), `want status refused with reason starting ${v.code}`);
  } else {
    t.ok(terminal.ok === false && terminal.error?.code == v.code, `want error code ${v.code}`);
  }
}

/** accepted posts a frame the reference accepts and waits for its terminal. */
async function accepted(t, frame) {
  const v = checkFrame(frame);
  if (v.verdict != "accept") throw new Error(`kit: the reference does not accept the frame: ${json(v.errors)}`);
  return answer(frame);
}

/**
 * terminals counts the terminal frames for id from index `from`, after a
 * fence, so a second one that follows the first is seen.
 */
async function terminalsAfterFence(id, from) {
  await fence();
  return framesFor(id, from).filter(isTerminal);
}

const SLOW_SQL = "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) FROM c";

/** A db request that runs until it is cancelled (or the host's statement time limit). */
const slowRequest = (id) => ({ v: VERSION, type: TYPE_DB_REQUEST, requestId: id, instanceId: instanceId(), op: OP_EXEC, sql: SLOW_SQL });
const cancelFrame = (id, iid = instanceId()) => ({ v: VERSION, type: TYPE_APP_CANCEL, requestId: id, instanceId: iid });
const kvGet = (id, key) => ({ v: VERSION, type: TYPE_DB_REQUEST, requestId: id, instanceId: instanceId(), op: OP_KV_GET, key });

/** The announce the runtime sent, again: what a re-announce looks like. */
const announceFrame = (extra = {}) => ({
  v: VERSION,
  type: TYPE_APP_ANNOUNCE,
  appId: "snug-conform",
  displayName: "Snug conformance kit",
  protocolVersions: PROTOCOL_VERSIONS,
  ...extra,
});

const hostReadies = (from = 0) => framesSince(from).filter((f) => f.type == TYPE_HOST_READY);

/** Waits until the in-flight request id has not ended: no terminal yet, after a fence. */
async function stillInFlight(id, from) {
  await fence();
  return framesFor(id, from).filter(isTerminal).length == 0;
}

// ---- handshake ---------------------------------------------------------------

add("handshake.load-and-ack", RULE_HANDSHAKE, "host-ready comes on the iframe's load and as the announce's ack, with one instanceId", { raw: true }, async (t) => {
  t.expect("at least two host-ready frames before any request (load, ack), all with the instanceId snug.ready has");
  const two = await next(() => hostReadies().length >= 2, 5000, 0);
  const hr = hostReadies();
  t.saw(`${hr.length} host-ready: instanceIds ${json([...new Set(hr.map((f) => f.instanceId))])}`);
  t.ok(two || hr.length >= 2, `${hr.length} host-ready within 5 s of load: the host sends it on load and as the ack of the announce, both`);
  t.ok(hr.every((f) => f.instanceId === instanceId()), "the host-ready frames carry different instanceIds");
});

add("handshake.idempotent", RULE_HANDSHAKE, "a second announce is acked with the same host-ready", { raw: true }, async (t) => {
  t.expect("host-ready again: the same instanceId, protocolVersions and capabilities");
  // The handshake ends with two host-ready frames, the load-time one and the
  // ack of the runtime's announce, in either order: the iframe's load and
  // the announce reach the host on separate paths. Announcing again before
  // both came would take the late one for this announce's ack.
  await next(() => hostReadies().length >= 2, ANSWER_MS, 0);
  const first = hostReadies()[0];
  const from = log.length;
  post(announceFrame());
  const m = await next((m) => isFrame(m.data) && m.data.type == TYPE_HOST_READY, ANSWER_MS, from);
  if (!t.ok(m, "no host-ready answered the announce")) return t.saw("nothing");
  const f = m.data;
  t.saw(brief(f));
  t.ok(f.instanceId === first.instanceId, `instanceId changed: ${first.instanceId} → ${f.instanceId}`);
  t.ok(json(f.protocolVersions) == json(first.protocolVersions), "protocolVersions changed");
  t.ok(json(f.capabilities) == json(first.capabilities), `capabilities changed: ${json(first.capabilities)} → ${json(f.capabilities)}`);
});

add("handshake.capabilities", RULE_HANDSHAKE, "host-ready's fields are present and typed (the host-ready schema)", {}, async (t) => {
  t.expect("instanceId, protocolVersions with this version, capabilities {streaming, db, auth booleans; net?, openUrl? booleans}, theme");
  const frames = env.transport == "snug" ? hostReadies() : [{ type: TYPE_HOST_READY, ...env.host }];
  const bad = [];
  for (const f of frames) {
    const { v, type, ...fields } = f;
    for (const e of validateHostReady(fields)) bad.push(`${e.path || "/"} ${e.rule}`);
    if (!f.protocolVersions?.includes(VERSION)) bad.push(`protocolVersions ${json(f.protocolVersions)} lacks ${VERSION}`);
  }
  if (env.transport != "snug") t.note("checked as the runtime presents it (MCP Apps: built from ui/initialize and the session)");
  t.saw(`capabilities ${json(env.host.capabilities)}`);
  t.rule(bad.length ? bad[0].split(" ")[1] : "");
  t.ok(bad.length == 0, bad.join(", "));
});

add("handshake.theme", RULE_HANDSHAKE, "host-ready's theme is valid", {}, async (t) => {
  t.expect("theme {mode: light|dark, tokens?: ≤64 custom properties}");
  const theme = env.host.theme;
  t.saw(json(theme));
  const bad = validateTheme(theme);
  t.rule(bad[0]?.rule);
  t.ok(bad.length == 0, bad.map((e) => `${e.path || "/"} ${e.rule}`).join(", "));
});

add("handshake.locale", RULE_HANDSHAKE, "host-ready's locale, when present, is a BCP 47 tag", {}, async (t) => {
  t.expect(`absent, or a well-formed BCP 47 tag of 2–${HOST_READY_LOCALE_MAX_LENGTH} characters`);
  const loc = env.host.locale;
  t.saw(loc === undefined ? "absent" : json(loc));
  if (loc === undefined) return t.note("no locale (optional)");
  let ok = typeof loc == "string" && loc.length >= 2 && loc.length <= HOST_READY_LOCALE_MAX_LENGTH;
  try {
    Intl.getCanonicalLocales(loc);
  } catch {
    ok = false;
  }
  t.ok(ok, `${json(loc)} is not a BCP 47 tag the browser reads (Intl.getCanonicalLocales)`);
});

// ---- R1 --------------------------------------------------------------------

add("r1.unsupported-version", RULE_R1, "a frame of an unsupported version is answered UNSUPPORTED_VERSION, the requestId echoed exactly", { raw: true }, (t) =>
  rejected(t, { v: Math.max(...PROTOCOL_VERSIONS) + 1, type: TYPE_APP_MESSAGE, requestId: plausibleId("r1-version"), instanceId: instanceId(), appId: "snug-conform", action: "conform" }),
);

add("r1.version-not-integer", RULE_R1, "a frame whose v is not an integer is answered MALFORMED", { raw: true }, (t) =>
  rejected(t, { v: String(VERSION), type: TYPE_APP_MESSAGE, requestId: plausibleId("r1-v-string"), instanceId: instanceId(), appId: "snug-conform", action: "conform" }),
);

add("r1.no-type", RULE_R1, "a frame without a type is answered MALFORMED as an app-response", { raw: true }, (t) =>
  rejected(t, { v: VERSION, requestId: plausibleId("r1-no-type"), instanceId: instanceId() }),
);

add("r1.schema", RULE_R1, "a known frame that breaks its schema is answered MALFORMED", { raw: true }, (t) =>
  rejected(t, { v: VERSION, type: TYPE_APP_MESSAGE, requestId: plausibleId("r1-schema"), instanceId: instanceId(), appId: "snug-conform" }),
);

add("r1.paired-db", RULE_R1, "a malformed db-request is answered with a db-response", { raw: true }, (t) =>
  rejected(t, { v: VERSION, type: TYPE_DB_REQUEST, requestId: plausibleId("r1-db"), instanceId: instanceId(), op: "drop-everything" }),
);

add("r1.paired-open-url", RULE_R1, "a malformed open-url-request is answered with an open-url-result, refused", { raw: true }, (t) =>
  rejected(t, { v: VERSION, type: TYPE_OPEN_URL_REQUEST, requestId: plausibleId("r1-open"), instanceId: instanceId(), url: "javascript:alert(1)" }),
);

add("r1.no-request-id", RULE_R1, "a failing frame without a requestId gets nothing back", { raw: true }, (t) =>
  rejected(t, { v: Math.max(...PROTOCOL_VERSIONS) + 1, type: TYPE_APP_MESSAGE, instanceId: instanceId(), appId: "snug-conform", action: "conform" }),
);

/** nothingBack posts each value and checks nothing comes back for any. */
async function nothingBack(t, values) {
  const got = [];
  for (const [label, value] of values) {
    const s = sub(t);
    await rejected(s, value, typeof value == "object" && !Array.isArray(value) ? undefined : JSON.stringify(value));
    got.push(`${label}: ${s.got}`);
    for (const f of s.fails) t.fail(`${label}: ${f}`);
  }
  t.saw(got.join("; "));
}

add("r1.implausible-request-id", RULE_R1, "a failing frame whose requestId is not 1–128 code points of string gets nothing back", { raw: true }, (t) => {
  t.expect(`nothing comes back for a requestId of ${RECOVER_MAX_LENGTH + 1} code points, an empty one or a number`);
  const frame = (requestId) => ({ v: Math.max(...PROTOCOL_VERSIONS) + 1, type: TYPE_DB_REQUEST, requestId, instanceId: instanceId(), op: OP_KV_GET, key: "k" });
  return nothingBack(t, [
    [`${RECOVER_MAX_LENGTH + 1} code points`, frame(plausibleId("r1-long") + "z")],
    ["empty", frame("")],
    ["a number", frame(42)],
  ]);
});

add("r1.not-an-object", RULE_R1, "a message that is no JSON object gets nothing back", { raw: true }, (t) => {
  t.expect("nothing comes back for a string, an array or a number");
  return nothingBack(t, [
    ["a string", "snug"],
    ["an array", [VERSION, TYPE_APP_MESSAGE]],
    ["a number", 7],
  ]);
});

// ---- R2 --------------------------------------------------------------------

add("r2.unknown-type", RULE_R2, "an unknown snug:* type with v:1 is ignored", { raw: true }, async (t) => {
  const frame = { v: VERSION, type: "snug:conform-future-frame", requestId: newId("r2-type"), instanceId: instanceId(), future: true };
  const v = checkFrame(frame);
  if (v.verdict != "ignore") throw new Error(`kit: the reference does not ignore ${frame.type}`);
  t.expect("nothing comes back (ignored, not rejected)");
  const from = log.length;
  post(frame);
  await fence();
  const extra = unexpectedSince(from);
  t.saw(extra.length ? extra.map(brief).join(", ") : "nothing");
  t.ok(extra.length == 0, `the host answered an unknown type: ${brief(extra[0])}`);
});

add("r2.unknown-fields", RULE_R2, "unknown fields on a tolerant frame are ignored", { raw: true }, async (t) => {
  t.expect("an announce with an unknown field is acked with host-ready; a kvGet with one is answered ok (db)");
  const from = log.length;
  post(announceFrame({ conformFutureField: { nested: [1, 2, 3] } }));
  const m = await next((m) => isFrame(m.data) && m.data.type == TYPE_HOST_READY, ANSWER_MS, from);
  const got = [m ? brief(m.data) : "no host-ready"];
  t.ok(m, "the announce with an unknown field was not acked");
  if (env.host.capabilities.db) {
    const { terminal } = await accepted(t, { ...kvGet(newId("r2-fields"), "conform-r2"), conformFutureField: "x" });
    got.push(terminal ? brief(terminal) : "no db answer");
    t.ok(terminal?.ok === true, "the kvGet with an unknown field was not answered ok");
  }
  t.saw(got.join("; "));
});

add("r2.strict-net", RULE_R2, "an unknown field on the strict net-request rejects it (MALFORMED)", { raw: true, needs: "net" }, (t) =>
  rejected(t, { v: VERSION, type: TYPE_NET_REQUEST, requestId: plausibleId("r2-net"), instanceId: instanceId(), url: "https://conform.invalid/", method: METHOD_GET, credentials: "include" }),
);

add("r2.strict-open-url", RULE_R2, "an unknown field on the strict open-url-request rejects it", { raw: true, needs: "openUrl" }, (t) =>
  rejected(t, { v: VERSION, type: TYPE_OPEN_URL_REQUEST, requestId: plausibleId("r2-open"), instanceId: instanceId(), url: "https://conform.invalid/", target: "_top" }),
);
add("r2.strict-save-file", RULE_R2, "an unknown field on the strict save-file-request rejects it", { raw: true, needs: "saveFile" }, (t) =>
  rejected(t, { v: VERSION, type: TYPE_SAVE_FILE_REQUEST, requestId: plausibleId("r2-save"), instanceId: instanceId(), name: "conform.txt", data: "Y29uZm9ybQ==", folder: "Downloads" }),
);

// ---- R3 --------------------------------------------------------------------

add("r3.cancel", RULE_R3, "a cancelled request gets exactly one terminal frame, CANCELLED", { raw: true, needs: "db" }, async (t) => {
  t.expect("exactly one terminal: CANCELLED");
  const id = newId("r3-cancel");
  const from = log.length;
  post(slowRequest(id));
  post(cancelFrame(id));
  await next((m) => isFrame(m.data) && m.data.requestId === id && isTerminal(m.data), ANSWER_MS, from);
  const all = await terminalsAfterFence(id, from);
  t.saw(all.map(brief).join(", ") || "no terminal");
  t.ok(all.length == 1, `${all.length} terminal frames`);
  t.ok(all[0]?.error?.code == CODE_CANCELLED, "the terminal is not CANCELLED");
});

add("r3.supersede", RULE_R3, "a re-announce ends requests in flight with exactly one SUPERSEDED terminal", { raw: true, needs: "db" }, async (t) => {
  t.expect("exactly one terminal: SUPERSEDED, and host-ready with the same instanceId");
  const id = newId("r3-supersede");
  const from = log.length;
  post(slowRequest(id));
  post(announceFrame());
  await next((m) => isFrame(m.data) && m.data.requestId === id && isTerminal(m.data), ANSWER_MS, from);
  const all = await terminalsAfterFence(id, from);
  const hr = hostReadies(from);
  t.saw(`${all.map(brief).join(", ") || "no terminal"}; ${hr.map(brief).join(", ") || "no host-ready"}`);
  t.ok(all.length == 1, `${all.length} terminal frames`);
  t.ok(all[0]?.error?.code == CODE_SUPERSEDED, "the terminal is not SUPERSEDED");
  t.ok(hr.length >= 1 && hr.every((f) => f.instanceId === instanceId()), "no host-ready with the same instanceId acked the announce");
});

add("r3.burst", RULE_R3, "a burst of concurrent requests gets one terminal each", { raw: true, needs: "db" }, async (t) => {
  const n = 24;
  t.expect(`${n} requests posted at once: exactly one terminal each`);
  const from = log.length;
  const ids = Array.from({ length: n }, () => newId("r3-burst"));
  for (const id of ids) post(kvGet(id, "conform-r3"));
  await next(() => ids.every((id) => framesFor(id, from).some(isTerminal)), ANSWER_MS, from);
  await fence();
  const counts = ids.map((id) => framesFor(id, from).filter(isTerminal).length);
  const codes = [...new Set(ids.map((id) => framesFor(id, from).filter(isTerminal).map((f) => (f.ok ? "ok" : f.error?.code))).flat())];
  t.saw(`terminals per request: ${json(counts)}; outcomes ${json(codes)}`);
  t.ok(counts.every((c) => c == 1), `${counts.filter((c) => c != 1).length} of ${n} requests did not get exactly one terminal`);
});

add("r3.duplicate-in-flight", RULE_R3, "a second request with the id of one in flight gets no frame; the first still ends once", { raw: true, needs: "db" }, async (t) => {
  t.expect("no frame for the duplicate; one terminal (CANCELLED) for the id");
  const id = newId("r3-dup");
  const from = log.length;
  post(slowRequest(id));
  post(kvGet(id, "conform-r3"));
  const alive = await stillInFlight(id, from);
  post(cancelFrame(id));
  await next((m) => isFrame(m.data) && m.data.requestId === id && isTerminal(m.data), ANSWER_MS, from);
  const all = await terminalsAfterFence(id, from);
  t.saw(`${alive ? "" : "answered before the cancel; "}${all.map(brief).join(", ") || "no terminal"}`);
  t.ok(alive, "the duplicate was answered, ending or disturbing the request in flight");
  t.ok(all.length == 1, `${all.length} terminal frames for the id`);
});

add("r3.streaming", RULE_R3, "an ask streams cumulative text and ends with one terminal frame, the last", { raw: true }, async (t) => {
  t.expect("streaming:true texts each extending the one before, then one final answer, nothing after");
  const id = newId("r3-stream");
  const frame = { v: VERSION, type: TYPE_APP_MESSAGE, requestId: id, instanceId: instanceId(), appId: "snug-conform", action: "conform.stream", payload: { text: "Say one short sentence." } };
  const { terminal, from } = await accepted(t, frame);
  await fence();
  const frames = framesFor(id, from);
  const streaming = frames.filter((f) => f.type == TYPE_APP_RESPONSE && f.ok === true && f.streaming === true);
  const terminals = frames.filter(isTerminal);
  t.saw(`${streaming.length} streaming, ${terminals.length} terminal (${terminal ? brief(terminal) : "none"})`);
  if (!t.ok(terminal, "no terminal frame")) return;
  t.ok(terminals.length == 1, `${terminals.length} terminal frames`);
  t.ok(frames[frames.length - 1] === terminals[0], "a frame followed the terminal frame");
  for (let i = 1; i < streaming.length; i++)
    if (!t.ok(streaming[i].text.startsWith(streaming[i - 1].text), `streaming text ${i + 1} does not extend text ${i} (not cumulative)`)) break;
  if (!streaming.length) t.note(env.host.capabilities.streaming ? "the host streamed nothing for this ask (allowed)" : "streaming not advertised");
  else if (!env.host.capabilities.streaming) t.fail("streaming frames from a host that advertises streaming:false");
});

// ---- R4 --------------------------------------------------------------------

add("r4.foreign-instance", RULE_R4, "a request carrying another instance's id is refused and not carried out", { raw: true, needs: "db" }, async (t) => {
  t.expect("ok:false (refused), and the value it tried to set is not stored");
  const key = newId("r4-key");
  const frame = { v: VERSION, type: TYPE_DB_REQUEST, requestId: newId("r4-foreign"), instanceId: "conform-not-" + instanceId(), op: OP_KV_SET, key, value: "foreign" };
  const { terminal } = await accepted(t, frame);
  const stored = await call(snug.db.get(key));
  t.saw(`${terminal ? brief(terminal) : "no answer"}; stored value ${stored.ok ? json(stored.value) : codeOf(stored)}`);
  t.ok(terminal, "no answer: the request was dropped, not refused (R3 holds for it too)");
  t.ok(!terminal || terminal.ok === false, "the host accepted a request with another instance's id");
  t.ok(stored.ok && stored.value === null, "the request with another instance's id was carried out");
});

add("r4.foreign-cancel", RULE_R4, "an app-cancel carrying another instance's id cancels nothing", { raw: true, needs: "db" }, async (t) => {
  t.expect("the request stays in flight after the foreign cancel; the real cancel ends it CANCELLED");
  const id = newId("r4-slow");
  const from = log.length;
  post(slowRequest(id));
  post(cancelFrame(id, "conform-not-" + instanceId()));
  const alive = await stillInFlight(id, from);
  post(cancelFrame(id));
  const m = await next((m) => isFrame(m.data) && m.data.requestId === id && isTerminal(m.data), ANSWER_MS, from);
  t.saw(`after the foreign cancel: ${alive ? "still in flight" : brief(framesFor(id, from).find(isTerminal))}; then ${m ? brief(m.data) : "no terminal"}`);
  t.ok(alive, "the foreign app-cancel ended the request");
  t.ok(m?.data.error?.code == CODE_CANCELLED, "the app's own cancel did not end it CANCELLED");
});

add("r4.request-id-reuse", RULE_R4, "a requestId already answered is never answered again", { raw: true, needs: "db" }, async (t) => {
  t.expect("one terminal for the id, nothing for its reuse");
  const id = newId("r4-reuse");
  const first = await accepted(t, kvGet(id, "conform-r4"));
  post(kvGet(id, "conform-r4"));
  const all = await terminalsAfterFence(id, first.from);
  t.saw(all.map(brief).join(", ") || "nothing");
  t.ok(first.terminal, "the first request got no answer");
  t.ok(all.length <= 1, `${all.length} terminal frames for one requestId`);
});

add("r4.appid-not-principal", RULE_R4, "the announced appId is metadata: storage stays the installed app's", { raw: true, needs: "db" }, async (t) => {
  t.expect("after announcing another appId the app reads the same storage");
  const key = newId("r4-owner");
  await call(snug.db.set(key, "mine"));
  const from = log.length;
  post(announceFrame({ appId: "someone-else", displayName: "Someone else" }));
  const m = await next((m) => isFrame(m.data) && m.data.type == TYPE_HOST_READY, ANSWER_MS, from);
  const after = await call(snug.db.get(key));
  post(announceFrame());
  await next((m) => isFrame(m.data) && m.data.type == TYPE_HOST_READY, ANSWER_MS, from + 1);
  t.saw(`${m ? brief(m.data) : "no host-ready"}; value ${after.ok ? json(after.value) : codeOf(after)}`);
  t.ok(m && m.data.instanceId === instanceId(), "the announce of another appId changed the instance");
  t.ok(after.ok && after.value === "mine", "storage changed with the announced appId");
  await call(snug.db.set(key, null));
});

// ---- R6 --------------------------------------------------------------------

/**
 * sizeClassCase checks one size class: a frame of exactly limit bytes is
 * accepted (atLimit posts it and judges the answer), one of limit+1 bytes
 * is answered as the reference says, the requestId echoed.
 */
async function sizeClassCase(t, limit, make, set, atLimit) {
  // The reference's verdicts: the frame without its padding is accepted
  // (so at the limit only the size is in question), the one past it is not.
  const small = make(newId("r6-check"));
  set(small, "");
  const v = checkFrame(small);
  if (v.verdict != "accept") throw new Error(`kit: the reference does not accept the frame: ${json(v.errors)}`);
  const past = pad(make(plausibleId("r6-past")), set, limit + 1);
  const pv = checkFrame(past);
  const at = pad(make(newId("r6-at")), set, limit);
  t.expect(`a frame of ${limit} bytes is accepted; one of ${limit + 1} bytes is answered ${pv.code}, requestId echoed`);
  const a = await atLimit(at);
  t.ok(a.ok, `the frame at the limit was not accepted (${a.got})`);
  const s = sub(t);
  await rejected(s, past, undefined, pv);
  t.saw(`at ${limit}: ${a.got}; at ${limit + 1}: ${s.got}`);
  for (const f of s.fails) t.fail(`one byte past the limit: ${f}`);
}

/** answered posts a frame the reference accepts and judges its terminal with ok. */
const answered = (ok) => async (frame) => {
  const { terminal } = await answer(frame);
  return { ok: !!terminal && ok(terminal), got: terminal ? brief(terminal) : "no answer" };
};

const padField = (f, s) => (f.conformPad = s);

add("r6.default-class", RULE_R6, "the 256 KiB class: a frame at the limit passes, one byte past is answered", { raw: true }, (t) =>
  sizeClassCase(t, MAX_FRAME_BYTES, (requestId) => announceFrame({ requestId, conformPad: "" }), padField, async (frame) => {
    // An announce is acked by host-ready, which carries no requestId.
    const from = log.length;
    post(frame);
    const m = await next((m) => isFrame(m.data) && (m.data.type == TYPE_HOST_READY || m.data.requestId === frame.requestId), ANSWER_MS, from);
    return { ok: m?.data.type == TYPE_HOST_READY, got: m ? brief(m.data) : "no answer" };
  }),
);

add("r6.db-class", RULE_R6, "the db class (8 MiB): a frame at the limit passes, one byte past is answered", { raw: true, needs: "db" }, (t) =>
  sizeClassCase(t, MAX_DB_FRAME_BYTES, (id) => ({ ...kvGet(id, "conform-r6"), conformPad: "" }), padField, answered((f) => f.ok === true)),
);

add("r6.net-class", RULE_R6, "the net class (1 MiB + 64 KiB): a frame at the limit passes, one byte past is answered", { raw: true, needs: "net" }, (t) => {
  // net-request is strict: the padding rides in its own fields, headers and
  // a body, to an address the host refuses before anything leaves (SSRF);
  // the frame layer must pass it, so its answer is anything but MALFORMED.
  const make = (requestId) => {
    const f = { v: VERSION, type: TYPE_NET_REQUEST, requestId, instanceId: instanceId(), url: "https://127.0.0.1/conform", method: METHOD_POST, headers: {}, body: "b".repeat(NET_REQUEST_BODY_MAX_LENGTH) };
    // Each header "x-conform-pad-NNNN":"h…" with its comma is 1024 bytes.
    const n = Math.floor((MAX_NET_FRAME_BYTES - 2048 - bytes(f)) / 1024);
    const value = "h".repeat(1024 - 24);
    for (let i = 0; i < n; i++) f.headers["x-conform-pad-" + String(i).padStart(4, "0")] = value;
    return f;
  };
  const set = (f, s) => (f.headers["x-conform-pad-last"] = s);
  return sizeClassCase(t, MAX_NET_FRAME_BYTES, make, set, answered((f) => !(f.ok === false && f.error?.code == CODE_MALFORMED)));
});

add("r6.artifact", RULE_R6, "a database of about 5 MiB exports and imports whole", { needs: "db" }, async (t) => {
  t.expect(`export of a database just under ${MAX_ARTIFACT_BYTES} bytes, import of it, the data back`);
  const saved = await call(snug.db.export());
  if (!saved.ok) return t.fail(`export failed: ${codeOf(saved)}`);
  const blob = MAX_ARTIFACT_BYTES - 256 * 1024;
  const steps = [];
  const step = async (what, p) => {
    const t0 = performance.now();
    const r = await call(p);
    steps.push(`${what}: ${r.ok ? "ok" : codeOf(r)} ${Math.round(performance.now() - t0)}ms`);
    if (!r.ok) throw new Error(`${what} failed: ${r.error?.code} ${r.error?.message}`);
    return r.value;
  };
  try {
    await step("create", snug.db.exec("CREATE TABLE IF NOT EXISTS conform_big (b BLOB)"));
    await step("fill", snug.db.exec("INSERT INTO conform_big VALUES (zeroblob(?))", [blob]));
    const big = await step("export", snug.db.export());
    await step("drop", snug.db.exec("DROP TABLE conform_big"));
    const imp = await step("import", snug.db.import(big));
    const back = await step("read", snug.db.exec("SELECT length(b) AS n FROM conform_big"));
    t.saw(`exported ${big.length} bytes; import ${json(imp)}; blob of ${back.rows?.[0]?.[0]} bytes back; ${steps.join(", ")}`);
    t.ok(big.length <= MAX_ARTIFACT_BYTES && big.length > blob, `exported ${big.length} bytes, want ${blob}–${MAX_ARTIFACT_BYTES}`);
    t.ok(back.rows?.[0]?.[0] === blob, "the imported database does not hold the data");
  } catch (e) {
    t.saw(steps.join("; "));
    t.fail(e.message);
  } finally {
    const r = await call(snug.db.import(saved.value));
    if (!r.ok) t.fail(`restoring the kit's database failed: ${codeOf(r)}`);
  }
});

// ---- db ----------------------------------------------------------------------

add("db.exec", RULE_DB, "exec runs one statement with bound params and answers columns, rows, changes, lastInsertRowid", { needs: "db" }, async (t) => {
  t.expect("create, insert with params (changes 1, lastInsertRowid), select the row back");
  const steps = [];
  const r1 = await call(snug.db.exec("CREATE TABLE IF NOT EXISTS conform_t (id INTEGER PRIMARY KEY, name TEXT, n REAL)"));
  const r2 = await call(snug.db.exec("INSERT INTO conform_t (name, n) VALUES (?, ?)", ["Zoë 😀", 1.5]));
  const r3 = r2.ok ? await call(snug.db.exec("SELECT id, name, n FROM conform_t WHERE id = ?", [r2.value.lastInsertRowid])) : r2;
  await call(snug.db.exec("DROP TABLE IF EXISTS conform_t"));
  for (const [w, r] of [["create", r1], ["insert", r2], ["select", r3]]) steps.push(`${w}: ${r.ok ? json(r.value) : codeOf(r)}`);
  t.saw(steps.join("; "));
  if (!t.ok(r1.ok && r2.ok && r3.ok, "a statement failed")) return;
  t.ok(r2.value.changes === 1 && Number.isInteger(r2.value.lastInsertRowid), "insert: want changes 1 and an integer lastInsertRowid");
  t.ok(json(r3.value.columns) == json(["id", "name", "n"]), "select: columns are not id, name, n");
  t.ok(json(r3.value.rows) == json([[r2.value.lastInsertRowid, "Zoë 😀", 1.5]]), "select: the row is not what was inserted");
});

add("db.kv", RULE_DB, "kvSet stores a JSON value, kvGet finds it, null deletes it", { needs: "db" }, async (t) => {
  const key = newId("db-kv");
  const value = { a: [1, "två", null, true], b: { c: 1.25 }, "😀": "x" };
  t.expect("set, get equal, set null, get not found");
  const s = await call(snug.db.set(key, value));
  const g = await call(snug.db.get(key));
  const d = await call(snug.db.set(key, null));
  const gone = await call(snug.db.get(key));
  t.saw(`set ${codeOf(s)}; get ${g.ok ? json(g.value) : codeOf(g)}; delete ${codeOf(d)}; get ${gone.ok ? json(gone.value) : codeOf(gone)}`);
  t.ok(s.ok && g.ok && json(g.value) == json(value), "the value read back differs");
  t.ok(d.ok && gone.ok && gone.value === null, "the value is still there after kvSet null");
});

add("db.export-import", RULE_DB, "export then import restores the database as it was", { needs: "db" }, async (t) => {
  const key = newId("db-rt");
  t.expect("set 1, export, set 2, import the export, read 1");
  await call(snug.db.set(key, 1));
  const ex = await call(snug.db.export());
  await call(snug.db.set(key, 2));
  const im = ex.ok ? await call(snug.db.import(ex.value)) : ex;
  const g = await call(snug.db.get(key));
  t.saw(`export ${ex.ok ? ex.value.length + " bytes" : codeOf(ex)}; import ${im.ok ? json(im.value) : codeOf(im)}; value ${g.ok ? json(g.value) : codeOf(g)}`);
  t.ok(ex.ok && im.ok && g.ok && g.value === 1, "the import did not restore the exported database");
  if (ex.ok) t.ok(im.ok && im.value?.bytes === ex.value.length, "import's bytes differ from the file's");
  await call(snug.db.set(key, null));
});

add("db.refused-sql", RULE_DB, "ATTACH, load_extension, writable_schema and VACUUM INTO are refused with DB_SQL_ERROR, losing nothing", { needs: "db" }, async (t) => {
  const key = newId("db-keep");
  await call(snug.db.set(key, "kept"));
  const sqls = ["ATTACH DATABASE 'conform.db' AS other", "SELECT load_extension('conform')", "PRAGMA writable_schema = ON", "VACUUM INTO 'conform-copy.db'", "SELEC nothing"];
  t.expect(`each of ${sqls.length} refused with ${CODE_DB_SQL_ERROR}; the data still there`);
  const got = [];
  for (const sql of sqls) {
    const r = await call(snug.db.exec(sql));
    got.push(`${sql.split(" ").slice(0, 2).join(" ")}: ${codeOf(r)}`);
    t.ok(!r.ok && codeOf(r) == CODE_DB_SQL_ERROR, `${sql} was not refused with ${CODE_DB_SQL_ERROR}`);
  }
  const kept = await call(snug.db.get(key));
  t.saw(got.join("; ") + `; value ${kept.ok ? json(kept.value) : codeOf(kept)}`);
  t.ok(kept.ok && kept.value === "kept", "data was lost");
  await call(snug.db.set(key, null));
});

add("db.import-invalid", RULE_DB, "an import that is no database is refused DB_IMPORT_INVALID and the old database stays", { needs: "db" }, async (t) => {
  const key = newId("db-old");
  await call(snug.db.set(key, "old"));
  const ex = await call(snug.db.export());
  const bad = [new TextEncoder().encode("this is not a database"), ex.ok ? ex.value.slice(0, Math.floor(ex.value.length / 2)) : new Uint8Array(10)];
  t.expect(`both refused with ${CODE_DB_IMPORT_INVALID}; the old value still there`);
  const got = [];
  for (const b of bad) {
    const r = await call(snug.db.import(b));
    got.push(codeOf(r));
    t.ok(!r.ok && codeOf(r) == CODE_DB_IMPORT_INVALID, `an invalid file (${b.length} bytes) was not refused with ${CODE_DB_IMPORT_INVALID}`);
  }
  const kept = await call(snug.db.get(key));
  t.saw(`text: ${got[0]}; half a database: ${got[1]}; value ${kept.ok ? json(kept.value) : codeOf(kept)}`);
  t.ok(kept.ok && kept.value === "old", "the old database did not survive the failed import");
  await call(snug.db.set(key, null));
});

// ---- net ---------------------------------------------------------------------

add("net.credential-header", RULE_NET, "a net-request carrying a credential-shaped header is MALFORMED", { raw: true, needs: "net" }, async (t) => {
  t.expect(`each of ${STRIP_HEADERS.join(", ")} (any case): net-response ok:false MALFORMED, requestId echoed, and no dialog`);
  const got = [];
  for (const name of STRIP_HEADERS) {
    const spelled = name.replace(/(^|-)([a-z])/g, (m) => m.toUpperCase()); // Authorization, X-Api-Key
    const frame = { v: VERSION, type: TYPE_NET_REQUEST, requestId: plausibleId("net-cred"), instanceId: instanceId(), url: "https://conform.invalid/", method: METHOD_GET, headers: { [spelled]: "conform-secret" } };
    const s = sub(t);
    await rejected(s, frame);
    got.push(`${spelled}: ${s.got}`);
    for (const f of s.fails) t.fail(`${spelled}: ${f}`);
  }
  t.saw(got.join("; "));
  t.noDialogs("a credential-shaped header");
});

async function netRefused(t, urls, code) {
  t.expect(`${code} for each, before anything leaves and without asking the user`);
  const got = [];
  for (const url of urls) {
    const r = await call(snug.net.fetch(url));
    got.push(`${url}: ${r.ok ? "status " + r.value.status : codeOf(r)}`);
    t.ok(!r.ok && codeOf(r) == code, `${url} was not refused with ${code}`);
  }
  t.saw(got.join("; "));
  t.noDialogs("an address it must refuse");
}

add("net.loopback", RULE_NET, "loopback, link-local metadata and localhost addresses are refused NET_SSRF_BLOCKED", { needs: "net" }, (t) =>
  netRefused(t, ["https://127.0.0.1/", "https://[::1]/", "https://169.254.169.254/latest/meta-data/", "https://0x7f000001/", "https://localhost/"], CODE_NET_SSRF_BLOCKED),
);

add("net.scheme", RULE_NET, "a URL that is not https is refused NET_SCHEME_BLOCKED", { needs: "net" }, (t) =>
  netRefused(t, ["http://conform.invalid/", "ftp://conform.invalid/file"], CODE_NET_SCHEME_BLOCKED),
);

// ---- open-url ------------------------------------------------------------------

/** apiResult is a call of openUrl or saveFile as the result frame's status and reason. */
// The runtime rejects a refusal: with the host's reason, or MALFORMED when
// it refused the request itself before sending it (issue 12.1).
const apiResult = (r) =>
  r.ok
    ? { status: r.value }
    : r.error?.reason !== undefined || r.error?.code == CODE_MALFORMED
      ? { status: STATUS_REFUSED, reason: String(r.error.reason ?? r.error.message) }
      : { status: "error " + codeOf(r) };

/** openURL asks the host to open url: a raw frame (so the reason is seen) or the API. */
async function openURL(url, ms = ANSWER_MS, requestId = newId("open")) {
  if (env.transport != "snug") {
    return apiResult(await call(snug.openUrl(url)));
  }
  const { terminal } = await answer({ v: VERSION, type: TYPE_OPEN_URL_REQUEST, requestId, instanceId: instanceId(), url }, ms);
  return terminal || { status: "no answer" };
}

add("open-url.refused", RULE_OPEN_URL, "javascript:, data:, http:, userinfo and oversize URLs are refused without asking", { needs: "openUrl" }, async (t) => {
  const urls = ["javascript:alert(1)", "data:text/html,<h1>x</h1>", "http://conform.invalid/", "https://user:pw@conform.invalid/", "https://conform.invalid/" + "a".repeat(OPEN_URL_REQUEST_URL_MAX_LENGTH)];
  t.expect(`status refused with a reason (≤${OPEN_URL_RESULT_REASON_MAX_LENGTH}) for each, and no dialog`);
  const got = [];
  for (const url of urls) {
    const r = await openURL(url);
    const shown = url.length > 40 ? url.slice(0, 32) + `…(${url.length})` : url;
    got.push(`${shown}: ${r.status}${r.reason ? ` (${r.reason.split(":")[0]})` : ""}`);
    t.ok(r.status == STATUS_REFUSED, `${shown} was not refused`);
    if (env.transport == "snug" && r.reason !== undefined)
      t.ok([...r.reason].length <= OPEN_URL_RESULT_REASON_MAX_LENGTH, `the reason for ${shown} is over ${OPEN_URL_RESULT_REASON_MAX_LENGTH} code points`);
  }
  t.saw(got.join("; "));
  t.noDialogs("a URL it must refuse");
});

/**
 * dialogCase opens a valid URL and wants the host's dialog answered with
 * decision; the result must follow the answer, and the dialog must have
 * shown the URL in full.
 */
function dialogCase(t, decision, want) {
  const url = `https://conform.invalid/snug-conform/${decision}/${newId("dialog")}?q=a%20b&x=1#frag`;
  t.expect(`the host's own dialog shows ${url} in full; answered ${decision}, the result is ${want}`);
  return dialogFlow(t, { kind: "open-url", url, shown: url, decision }, want, STATUS_OPENED, (rid, ms) => openURL(url, ms, rid));
}

/**
 * dialogFlow starts a request that needs the user (start(requestId, ms)
 * resolves with its result) and wants the host's dialog answered as w says
 * (w.kind, w.decision, w.shown: what the dialog must show in full); the
 * result must be want, or allowed/declined when a person answered.
 */
async function dialogFlow(t, w, want, allowed, start) {
  w = { id: newId("wants"), ...w };
  const rid = newId(w.kind);
  const driver = env.driver?.dialogs;
  const wait = driver ? 25000 : 30000;
  const asked = ask(w, wait);
  try {
    const result = start(rid, wait + 5000);
    const first = await Promise.race([result.then((r) => ({ r })), asked.then((d) => ({ d }))]);
    let { r, d } = first;
    if (!r) r = d?.noDialog ? null : await result;
    // The answer came first: a driver reports what it did (answered, or no
    // dialog found), after its click, on its own time; asked ends at wait.
    else if (driver) d = await asked;
    if (!r || r.status == "no answer") {
      // Nobody answered: the request gets its cancel, and the case is skipped.
      if (env.transport == "snug") post(cancelFrame(rid));
      t.saw(d?.noDialog ? `no dialog: ${d.noDialog}` : "no answer");
      t.skip(
        d?.noDialog
          ? `the driver found no dialog it can answer (${d.noDialog}); docs/conformance.md describes the data-snug-confirm contract`
          : `no one answered the host's dialog within ${wait / 1000} s: this case needs a person or a driver that answers dialogs`,
      );
    }
    const shown = d?.answered?.shown;
    t.saw(`${r.status}${r.reason ? ` (${r.reason})` : ""}${d?.answered ? `; the dialog showed ${json(shown)}` : ""}`);
    if (!d?.answered) {
      if (env.transport == "mcp-apps")
        t.skip(`MCP Apps: ${w.kind == "save-file" ? "ui/download-file hands the file" : "ui/open-link hands the URL"} to the host, which decides whether and how to ask the user; no dialog the driver can see (the host answered ${r.status})`);
      if (driver) return t.fail(`the host answered ${r.status} without a dialog the driver could see`);
      t.note("answered by hand: what the dialog showed was not checked");
      return t.ok(r.status == allowed || r.status == STATUS_DECLINED, `the request was ${r.status}`);
    }
    t.ok(r.status == want, `answered ${w.decision}, the result is ${r.status}, not ${want}`);
    t.ok(shown === w.shown, `the dialog did not show ${json(w.shown)} in full: ${json(shown)}`);
  } finally {
    asked.close();
  }
}

add("open-url.dialog-deny", RULE_OPEN_URL, "a valid URL is shown in the host's own dialog; denied, it is declined", { needs: "openUrl" }, (t) => dialogCase(t, "deny", STATUS_DECLINED));
add("open-url.dialog-open", RULE_OPEN_URL, "a valid URL is shown in the host's own dialog; allowed, it is opened", { needs: "openUrl" }, (t) => dialogCase(t, "once", STATUS_OPENED));

// ---- save-file -----------------------------------------------------------------

/** saveFile asks the host to save a file: a raw frame (so the reason is seen) or the API. */
async function saveFile(name, text, ms = ANSWER_MS, requestId = newId("save"), data) {
  if (env.transport != "snug") return apiResult(await call(snug.saveFile(name, new Blob([text]), "text/plain")));
  data ??= btoa(String.fromCodePoint(...new TextEncoder().encode(text)));
  const { terminal } = await answer({ v: VERSION, type: TYPE_SAVE_FILE_REQUEST, requestId, instanceId: instanceId(), name, mimeType: "text/plain", data }, ms);
  return terminal || { status: "no answer" };
}

add("save-file.refused", RULE_SAVE_FILE, "a name with a folder, data that is not base64 and a file past 5 MiB are refused without asking", { needs: "saveFile" }, async (t) => {
  if (env.transport != "snug")
    t.skip("MCP Apps: ui/download-file hands the name and bytes to the host, whose own policy decides what it saves; the Snug host's refusals are not carried");
  const files = [
    ["../conform.txt", "a name that climbs out of the folder"],
    ["notes/conform.txt", "a name with a folder"],
    ["notes\\conform.txt", "a name with a backslash folder"],
    ["..", "the name .."],
    ["conform.txt", "data that is not base64", "not base64!"],
    ["conform.txt", "a file past 5 MiB", "A".repeat(SAVE_FILE_REQUEST_DATA_MAX_LENGTH + 4)],
  ];
  t.expect(`status refused with a reason (≤${SAVE_FILE_RESULT_REASON_MAX_LENGTH}) for each, and no dialog`);
  const got = [];
  for (const [name, what, data] of files) {
    const r = await saveFile(name, "conform", ANSWER_MS, newId("save"), data);
    got.push(`${what}: ${r.status}${r.reason ? ` (${r.reason.slice(0, 60)})` : ""}`);
    t.ok(r.status == STATUS_REFUSED, `${what} (${json(name)}) was not refused`);
    if (r.reason !== undefined) t.ok([...r.reason].length <= SAVE_FILE_RESULT_REASON_MAX_LENGTH, `the reason for ${what} is over ${SAVE_FILE_RESULT_REASON_MAX_LENGTH} code points`);
  }
  t.saw(got.join("; "));
  t.noDialogs("a file it must refuse");
});

/** saveCase offers a small text file and wants the host's dialog answered with decision. */
function saveCase(t, decision, want) {
  const name = `conform-${decision}-${newId("file").slice(-8)}.txt`;
  t.expect(`the host's own dialog names ${name}; answered ${decision}, the result is ${want}`);
  return dialogFlow(t, { kind: "save-file", name, shown: name, decision }, want, STATUS_SAVED, (rid, ms) => saveFile(name, "Saved by snuggen's conformance kit.\n", ms, rid));
}

add("save-file.dialog-deny", RULE_SAVE_FILE, "a valid file is named in the host's own dialog; cancelled, it is declined", { needs: "saveFile" }, (t) => saveCase(t, "deny", STATUS_DECLINED));
add("save-file.dialog-save", RULE_SAVE_FILE, "a valid file is named in the host's own dialog; saved, it is saved", { needs: "saveFile" }, (t) => saveCase(t, "once", STATUS_SAVED));

// ---- C2 ----------------------------------------------------------------------

add("c2.network", RULE_C2, "the frame reaches no network of its own: fetch, XHR, WebSocket, EventSource, beacon, import, worker, image, script", {}, c2Network);
add("c2.storage", RULE_C2, "the frame has no storage of its own: localStorage, sessionStorage, indexedDB, cookies, caches", {}, c2Storage);
add("c2.parent", RULE_C2, "the frame cannot reach the host's page or open windows", {}, c2Parent);
add("c2.webrtc", RULE_C2, "WebRTC is gone, in the frame and in a frame it creates", {}, c2WebRTC);

// ---- observers: what the host sent during the whole run ---------------------------

add("r7.host-events", RULE_R7, "every host-event carries references only: no instanceId, exactly the event table's fields", { raw: true }, async (t) => {
  // Ask the driver to make the host send one (the theme toggle).
  const before = log.length;
  // A driver always reports (provoked, or none when the host has no
  // toggle): the bound only ends a wait for one that went away.
  const asked = ask({ id: newId("wants"), kind: "host-event" }, env.driver ? 25000 : 3000);
  const p = await asked;
  asked.close();
  if (p?.provoked && !p.provoked.none) await next((m) => isFrame(m.data) && m.data.type == TYPE_HOST_EVENT && m.data.event == EVENT_THEME_CHANGE, ANSWER_MS, before);
  const events = framesSince(0).filter((f) => f.type == TYPE_HOST_EVENT);
  t.expect("for each host-event: no instanceId; a known event's data exactly its fields, each valid; no app→host event");
  const names = events.map((e) => e.event);
  t.saw(`${events.length} host-events: ${json([...new Set(names)])}`);
  if (!events.length) t.skip("the host sent no host-event during the run, so there was nothing to check");
  for (const e of events) {
    const where = `${e.event} ${json(e.data)}`;
    t.ok(!("instanceId" in e), `${where} carries an instanceId`);
    const spec = EVENT_SPECS[e.event];
    if (!spec) {
      t.note(`unknown event ${e.event} (ignored by apps)`);
      continue;
    }
    if (!t.ok(spec.direction == "host->app", `${e.event} is an app→host event, sent by the host`)) continue;
    const data = e.data ?? {};
    const keys = Object.keys(data).sort();
    const want = spec.data.map((d) => d.name).sort();
    t.ok(json(keys) == json(want), `${where}: fields ${json(keys)}, the table has ${json(want)} (R7: references only)`);
    for (const f of spec.data) {
      const v = data[f.name];
      const bad =
        f.type == "string" ? typeof v != "string" || (f.minLength && [...v].length < f.minLength) || (f.maxLength && [...v].length > f.maxLength) || (f.enum && !f.enum.includes(v))
        : f.type == "boolean" ? typeof v != "boolean"
        : f.type == "integer" ? !Number.isInteger(v) || (f.minimum !== undefined && v < f.minimum) || (f.maximum !== undefined && v > f.maximum)
        : f.type == "object" ? v === null || typeof v != "object" || Array.isArray(v) || (e.event == EVENT_THEME_CHANGE && validateTheme(v).length > 0)
        : false;
      t.ok(!bad, `${where}: ${f.name} is not a valid ${f.type}`);
    }
  }
});

add("r1.host-frames-valid", RULE_R1, "every frame the host sent carries v:1 and passes the reference checker", { raw: true }, async (t) => {
  const frames = log.map((m) => m.data);
  t.expect("each one a host→app frame that checkFrame accepts");
  const bad = [];
  for (const f of frames) {
    const v = checkFrame(f);
    if (v.verdict != "accept" || !Object.hasOwn(HOST_TO_APP, f.type))
      bad.push(`${brief(f)}: ${v.verdict}${v.errors ? " " + v.errors.map((e) => `${e.path} ${e.rule}`).join(", ") : ""}`);
  }
  t.saw(`${frames.length} frames, ${bad.length} invalid`);
  t.ok(bad.length == 0, bad.slice(0, 3).join("; "));
});

add("r5.error-objects", RULE_R5, "every error the host sent carries code, message and retryable, retryable as the registry says", {}, async (t) => {
  const errors =
    env.transport == "snug"
      ? framesSince(0).filter((f) => f.ok === false && f.error).map((f) => ({ ...f.error, from: brief(f) }))
      : env.apiErrors.map((e) => ({ ...e, from: "the runtime API" }));
  t.expect(`code (1–${ERROR_CODE_MAX_LENGTH}), message (≤${ERROR_MESSAGE_MAX_LENGTH}), retryable boolean; a known code's retryable as in the registry`);
  const codes = [...new Set(errors.map((e) => e.code))];
  t.saw(`${errors.length} errors, codes ${json(codes)}`);
  if (!errors.length) t.skip("the host sent no error during the run");
  for (const e of errors) {
    const { from, ...err } = e;
    if (env.transport == "snug") {
      const bad = validateError(err);
      if (!t.ok(bad.length == 0, `${from}: ${bad.map((b) => `${b.path} ${b.rule}`).join(", ")}`)) continue;
    } else if (!t.ok(typeof err.code == "string" && typeof err.message == "string" && typeof err.retryable == "boolean", `${err.code}: not a full error object`)) continue;
    if (!isKnownCode(err.code)) {
      t.note(`unknown code ${err.code} (rendered as HOST_ERROR)`);
      continue;
    }
    const want = err.code == CODE_PARSE_FAILED ? (err.attemptsRemaining ?? 0) > 0 : RETRYABLE_CODES.includes(err.code);
    t.ok(err.retryable === want, `${from}: ${err.code} with retryable ${err.retryable}, the registry says ${want}`);
  }
});

add("c1.no-credentials", RULE_C1, "no frame the host sent carries a credential-shaped header or key", { raw: true }, async (t) => {
  t.expect(`no key named ${STRIP_HEADERS.join(", ")} (any case, any depth) in any frame`);
  const found = [];
  const walk = (v, path) => {
    if (v === null || typeof v != "object") return;
    for (const [k, x] of Object.entries(v)) {
      if (STRIP_HEADERS.includes(k.toLowerCase())) found.push(path + "/" + k);
      walk(x, path + "/" + k);
    }
  };
  const frames = framesSince(0);
  frames.forEach((f, i) => walk(f, `#${i} ${f.type}`));
  t.saw(`${frames.length} frames, ${found.length} credential-shaped keys`);
  t.ok(found.length == 0, found.slice(0, 3).join(", "));
});
