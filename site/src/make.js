// The make boxes: "New app" under the app list, and "Change this app" on an
// open instance of an app the host made. Each sends the user's sentence to
// the host ({"t":"make"}), which runs the authoring loop with its agent and
// answers with one {"t":"make-round"} per draft (what came back, what the
// build and the smoke run found), {"t":"make-bytes"} while a reply streams,
// and one {"t":"make-end"}: the app installed or changed, or why there is
// none. The page decides nothing: a failed make installed nothing.
//
// Contract for tests: a box ([data-make-box]) has data-state idle, running,
// done or failed; its log ([data-make-log]) has one li[data-round] per
// round and a li[data-end] at the end.

export class Makes {
  /**
   * @param {import('./relay.js').Relay} relay
   * @param {import('./stage.js').Stage} stage
   * @param {HTMLElement} box the "New app" box
   */
  constructor(relay, stage, box) {
    this.relay = relay;
    this.stage = stage;
    this.box = box;
    this.ready = false;
    this.seq = 0;
    /** @type {Map<string, Run>} running makes by id */
    this.runs = new Map();
    const form = box.querySelector('form');
    form.addEventListener('submit', (ev) => {
      ev.preventDefault();
      this.start(box, form.elements.prompt.value, '');
    });
    stage.changeBox = (inst) => this.changeBox(inst);
  }

  /** The host's {"t":"make-info"}: the boxes show, or say why not. */
  info(msg) {
    this.ready = msg.ready === true;
    // A host that makes no apps says nothing more: no box. One that could
    // but does not here says why, in the box.
    this.box.hidden = !this.ready && !str(msg.why);
    this.box.dataset.ready = String(this.ready);
    this.box.querySelector('form').hidden = !this.ready;
    const note = this.box.querySelector('[data-make-note]');
    note.textContent = this.ready ? `The agent writes it, the host builds and checks it (${str(msg.bounds)}).` : str(msg.why);
    this.stage.renderChangeButtons(this.ready);
  }

  /** The box to change instance inst's app, made once per instance. */
  changeBox(inst) {
    const box = document.createElement('form');
    box.className = 'make-box change';
    box.dataset.makeBox = 'change';
    box.dataset.state = 'idle';
    const label = document.createElement('label');
    label.textContent = 'Change this app';
    const text = document.createElement('textarea');
    text.name = 'prompt';
    text.rows = 2;
    text.maxLength = 4000;
    text.required = true;
    text.placeholder = 'Describe the change: add a weekly chart';
    label.append(text);
    const go = document.createElement('button');
    go.type = 'submit';
    go.textContent = 'Change it';
    // The version before this one back (the current one is kept, so a
    // second click undoes the first).
    const back = document.createElement('button');
    back.type = 'button';
    back.textContent = 'Restore the previous version';
    back.dataset.makeRestore = '';
    back.addEventListener('click', () => this.restore(box, inst.app));
    const log = document.createElement('ol');
    log.className = 'make-log';
    log.dataset.makeLog = '';
    box.append(label, go, back, log);
    box.addEventListener('submit', (ev) => {
      ev.preventDefault();
      this.start(box, text.value, inst.app);
    });
    return box;
  }

  start(box, prompt, app) {
    prompt = prompt.trim();
    if (!this.ready || !prompt || box.dataset.state === 'running') return;
    const id = 'm' + ++this.seq;
    if (!this.relay.send({ t: 'make', id, prompt, app })) return;
    const run = new Run(box, app);
    this.runs.set(id, run);
  }

  restore(box, app) {
    if (!this.ready || box.dataset.state === 'running') return;
    const id = 'm' + ++this.seq;
    if (!this.relay.send({ t: 'make-restore', id, app })) return;
    this.runs.set(id, new Run(box, app, 'restoring…'));
  }

  /** Routes a host message about a make to its run. */
  message(msg) {
    const run = this.runs.get(msg.id);
    if (!run) return;
    if (msg.t === 'make-bytes') run.bytes(msg);
    if (msg.t === 'make-round') run.round(msg);
    if (msg.t === 'make-end') {
      this.runs.delete(msg.id);
      run.end(msg);
      // A new app opens; a changed one reloads by itself ({"t":"reload"}).
      if (!msg.error && !run.app && typeof msg.app === 'string') this.stage.mount(msg.app);
    }
  }

  /** The connection dropped: the host ended every make of this page. */
  reset() {
    for (const run of this.runs.values()) run.end({ error: 'the connection to the host closed: nothing was installed' });
    this.runs.clear();
  }
}

/** One make's display in its box. */
class Run {
  constructor(box, app, first = 'waiting for the agent…') {
    this.box = box;
    this.app = app;
    this.log = box.querySelector('[data-make-log]');
    this.log.replaceChildren();
    this.live = item(first);
    this.log.append(this.live);
    box.dataset.state = 'running';
    for (const el of box.querySelectorAll('textarea, button')) el.disabled = true;
  }

  bytes(msg) {
    this.live.textContent = `round ${num(msg.round)}: ${num(msg.bytes)} bytes from the agent…`;
  }

  round(msg) {
    const li = item(str(msg.line));
    li.dataset.round = String(num(msg.round));
    const problems = [...arr(msg.diagnostics), ...arr(msg.findings)];
    if (problems.length) {
      const pre = document.createElement('pre');
      pre.className = 'problems';
      pre.textContent = problems.join('\n');
      li.append(pre);
    }
    this.log.insertBefore(li, this.live);
    this.live.textContent = problems.length ? 'sent back to the agent to fix…' : 'installing…';
  }

  end(msg) {
    this.live.remove();
    const failed = typeof msg.error === 'string' && msg.error !== '';
    let text;
    if (failed) text = `Not made: ${msg.error}`;
    else if (msg.restored) text = `Restored version ${num(msg.restored)} of ${str(msg.app)}; the version it replaced is kept (version ${num(msg.kept)}).`;
    else if (this.app) text = `Changed ${str(msg.app)}${msg.kept ? `; the version it replaced is kept (version ${num(msg.kept)})` : ''}.`;
    else text = `Made ${str(msg.app)} in ${num(msg.rounds)} round${msg.rounds === 1 ? '' : 's'}; it is open.`;
    const li = item(text);
    li.dataset.end = failed ? 'failed' : 'done';
    this.log.append(li);
    this.box.dataset.state = failed ? 'failed' : 'done';
    if (!failed) this.box.dataset.app = str(msg.app);
    for (const el of this.box.querySelectorAll('textarea, button')) el.disabled = false;
  }
}

function item(text) {
  const li = document.createElement('li');
  li.textContent = text;
  return li;
}

const str = (s) => (typeof s === 'string' ? s : '');
const num = (n) => (Number.isFinite(n) ? n : 0);
const arr = (a) => (Array.isArray(a) ? a.filter((x) => typeof x === 'string') : []);
