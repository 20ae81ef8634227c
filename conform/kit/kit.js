// The Snug conformance kit: a Snug app that runs its cases one after
// another inside the host it was opened in, through the host's own sandbox
// and relay, shows each case's result as it comes, and leaves the report as
// JSON on the page (#report, and window.snugConform.report) once
// <html data-conform="done">.
//
// It talks to the host two ways: through the ordinary runtime (`snug`, the
// API an app uses) and through its raw-frame layer (wire.js), for the frames
// the runtime would never send. Every case is named by the rule it checks:
// an id of rules.json's normativeRules (RULE_* in the generated constants),
// and, where a frame rule, refinement or schema keyword decides the answer,
// that rule id as the reference checker (checkFrame) reports it.
//
// A driver (snuggen conform) attaches through window.snugConform: it says
// it is there, answers the host's dialogs when the kit asks (wants), and
// reports what each dialog showed. Without one, a case that needs a dialog
// answered waits for a person, then is skipped with the reason.

import { NORMATIVE_RULES, TYPE_HOST_READY, VERSION } from "./gen/constants.mjs";
import { brief, cases } from "./cases.js";
import { checkFrame } from "./src/check.js";
import { KIT, driverAttached, env, unexpected } from "./state.js";
import { isFrame, log, next, sleep } from "./wire.js";

const $ = (id) => document.getElementById(id);
const CASE_MS = 90000; // one case, at most (the dialog cases wait for a person)
const READY_MS = 15000;
// How long the kit waits for a driver before it starts: a browser a person
// uses gets a second (a driver attaching then only follows); one under
// automation (navigator.webdriver: started with remote debugging, as
// snuggen conform starts it) is likely a driver's, which attaches when it
// has found the kit's frame, however loaded the machine: the kit waits for
// it, the bound only ending a wait for a driver that never comes.
const DRIVER_MS = 1000;
const AUTOMATED_DRIVER_MS = 30000;

// ---- cases -----------------------------------------------------------------

class Skip extends Error {}

/** The context a case runs with: what it expects, what it got, its verdict. */
class T {
  constructor(c) {
    this.c = c;
    this.expected = "";
    this.got = "";
    this.check = c.check || "";
    this.fails = [];
    this.notes = [];
    this.dialogs = [];
  }
  expect(s) {
    this.expected = s;
    draw(this.c, this);
  }
  saw(s) {
    this.got = s;
    draw(this.c, this);
  }
  rule(id) {
    if (id && !this.check) this.check = id;
  }
  fail(reason) {
    this.fails.push(reason);
  }
  ok(cond, reason) {
    if (!cond) this.fail(reason);
    return !!cond;
  }
  note(s) {
    this.notes.push(s);
  }
  skip(reason) {
    throw new Skip(reason);
  }
  /** Fails when the driver saw a dialog during this case. */
  noDialogs(what) {
    if (this.dialogs.length) this.fail(`the host asked the user (${this.dialogs.map((d) => d.url || d.kind).join(", ")}) for ${what}, which it must refuse without asking`);
    else if (!env.driver?.dialogs) this.note("no driver watched for dialogs");
  }
}

const RAW_SKIP =
  "MCP Apps carries JSON-RPC tool calls, not Snug frames: the kit cannot put this raw frame on the wire (the adapter builds every frame itself)";

const rows = new Map();

function draw(c, t, status = "running", reason = "") {
  let tr = rows.get(c.id);
  if (!tr) {
    tr = document.createElement("tr");
    tr.innerHTML = "<td></td><td></td><td class=rule></td><td></td><td></td><td class=result></td>";
    tr.cells[0].textContent = String(rows.size + 1);
    tr.cells[1].textContent = c.id;
    tr.cells[2].textContent = c.rule + (t?.check ? " · " + t.check : "");
    tr.cells[2].title = (NORMATIVE_RULES[c.rule] || []).join(": ");
    $("cases").tBodies[0].append(tr);
    rows.set(c.id, tr);
  }
  if (t) tr.cells[2].textContent = c.rule + (t.check ? " · " + t.check : "");
  tr.dataset.status = status;
  tr.cells[3].textContent = t?.expected || c.title;
  tr.cells[4].textContent = t?.got || "";
  tr.cells[5].textContent = status + (reason ? ": " + reason : "");
}

const cut = (s, n = 600) => (s.length > n ? s.slice(0, n - 1) + "…" : s);

async function runCase(c) {
  const t = new T(c);
  env.current = t;
  const start = performance.now();
  let status = "pass";
  let reason = "";
  try {
    if (!NORMATIVE_RULES[c.rule]) throw new Error(`the kit names rule ${c.rule}, which rules.json does not define`);
    if (c.raw && env.transport != "snug")
      t.skip(env.transport == "mcp-apps" ? RAW_SKIP : "the host sent no Snug frame the kit could see, so raw frames cannot be judged");
    if (c.needs && !env.host?.capabilities?.[c.needs])
      t.skip(`the host does not advertise capabilities.${c.needs}: not offered, so not checked`);
    draw(c, t);
    let timer;
    await Promise.race([
      c.run(t),
      new Promise((_, reject) => (timer = setTimeout(() => reject(new Error(`the case did not finish within ${CASE_MS / 1000} s`)), CASE_MS))),
    ]).finally(() => clearTimeout(timer));
    if (t.fails.length) (status = "fail"), (reason = t.fails.join("; "));
    else reason = t.notes.join("; ");
  } catch (e) {
    if (e instanceof Skip) (status = "skip"), (reason = e.message);
    else (status = "fail"), (reason = `${e?.name || "Error"}: ${e?.message || e}`);
  }
  env.current = null;
  draw(c, t, status, reason);
  return {
    id: c.id,
    rule: c.rule,
    check: t.check || undefined,
    title: c.title,
    expected: cut(t.expected || c.title),
    got: cut(t.got),
    status,
    reason: cut(reason, 2000) || undefined,
    ms: Math.round(performance.now() - start),
  };
}

// ---- the run ---------------------------------------------------------------

function renderHost() {
  const h = env.host;
  const caps = h ? Object.entries(h.capabilities || {}).map(([k, v]) => `${k}:${v}`).join(" ") : "";
  $("host").textContent = h
    ? `instance ${h.instanceId} · transport ${env.transport} · ${caps}${env.driver ? ` · driver: ${env.driver.name}` : ""}`
    : "";
}

/**
 * whyNoReady says why the runtime never became ready: the host-ready frames
 * the host sent with the reference checker's verdict on each (the runtime
 * drops an invalid one, so the handshake never completes), or what the host
 * sent instead.
 */
function whyNoReady() {
  const wait = `no valid host-ready within ${READY_MS / 1000} s`;
  const sent = log.map((m) => m.data);
  const readies = sent.filter((d) => isFrame(d) && d.type == TYPE_HOST_READY);
  if (readies.length) {
    const why = readies.map((f) => {
      const v = checkFrame(f);
      if (v.verdict == "accept") return "valid to the reference checker, yet the runtime did not take it";
      return (v.errors || []).map((e) => `${e.path || "/"} ${e.rule}: ${e.message}`).join(", ");
    });
    return cut(`${wait}: the host sent ${readies.length} host-ready, refused as invalid: ${[...new Set(why)].join("; ")}`, 2000);
  }
  if (sent.length) return cut(`${wait}: the host sent ${sent.length} messages, none a host-ready: ${sent.slice(0, 3).map(brief).join(", ")}`, 2000);
  return `${wait}: the host sent nothing to the app's frame`;
}

env.onDriver = renderHost;
// Every message the host sent, for a person or a driver looking into a result.
window.snugConform.log = log;

async function main() {
  const root = document.documentElement;
  root.dataset.conform = "running";
  const started = new Date();
  $("status").textContent = "waiting for host-ready…";
  let host = null;
  try {
    host = await Promise.race([snug.ready, sleep(READY_MS).then(() => null)]);
  } catch {
    host = null;
  }
  env.host = host && JSON.parse(JSON.stringify(host));
  const noReady = host ? "" : whyNoReady();
  // snug.ready resolves in the runtime's own listener, before the kit's has
  // logged the same message: wait until it has.
  await next((m) => (isFrame(m.data) && m.data.type == TYPE_HOST_READY) || m.data?.jsonrpc === "2.0", 1000, 0);
  const sawSnug = log.some((m) => isFrame(m.data) && m.data.v === VERSION && m.data.type == TYPE_HOST_READY);
  const sawRPC = log.some((m) => m.data?.jsonrpc === "2.0");
  env.transport = sawSnug ? "snug" : sawRPC ? "mcp-apps" : "unknown";
  renderHost();
  // A driver that attaches now may choose the cases; later, it only follows.
  $("status").textContent = "starting…";
  await Promise.race([driverAttached, sleep(navigator.webdriver ? AUTOMATED_DRIVER_MS : DRIVER_MS)]);
  env.started = true;
  const run = env.only ? cases.filter((c) => env.only.includes(c.id)) : cases;
  const results = [];
  for (const c of run) {
    $("status").textContent = `running ${c.id} (${results.length + 1}/${run.length})`;
    if (!env.host) {
      draw(c, null, "fail", noReady);
      results.push({ id: c.id, rule: c.rule, title: c.title, expected: c.title, got: "", status: "fail", reason: noReady, ms: 0 });
      continue;
    }
    results.push(await runCase(c));
  }
  const count = (s) => results.filter((r) => r.status == s).length;
  const report = {
    kit: KIT,
    protocolVersion: VERSION,
    started: started.toISOString(),
    ms: Math.round(Date.now() - started.getTime()),
    host: env.host && {
      instanceId: env.host.instanceId,
      transport: env.transport,
      protocolVersions: env.host.protocolVersions,
      capabilities: env.host.capabilities,
      theme: env.host.theme?.mode,
      locale: env.host.locale,
    },
    driver: env.driver,
    only: env.only || undefined,
    summary: { pass: count("pass"), fail: count("fail"), skip: count("skip") },
    unexpectedDialogs: unexpected,
    cases: results,
  };
  window.snugConform.report = report;
  $("report").textContent = JSON.stringify(report, null, 2);
  $("status").textContent = `done: ${report.summary.pass} pass, ${report.summary.fail} fail, ${report.summary.skip} skip`;
  root.dataset.conform = "done";
}

// The runtime announces itself once the document is parsed; the kit starts
// after the document's load, so the host's load-time host-ready can come.
if (document.readyState == "complete") main();
else addEventListener("load", () => main());
