// The frame inspector: every frame the host saw or sent, in both directions,
// with the host's verdict, and the net audit entries. The rows are capped so
// a long session stays light; the counts are never capped.

import { GEN } from './gen.js';

const MAX_ROWS = 500;
// The table is redrawn at most this often: a relay can carry thousands of
// frames a second, and laying the table out per frame would starve the
// page's message handling.
const DRAW_MS = 200;

// Response frame types: each one the page delivers ends a request, except an
// app-response with streaming:true.
const TERMINAL_TYPES = new Set(GEN.terminalTypes);

export class Inspector {
  constructor(root) {
    this.root = root;
    this.frames = root.querySelector('#frames tbody');
    this.audit = root.querySelector('#audit tbody');
    this.countsEl = root.querySelector('#counts');
    this.counts = {
      in: 0,
      accept: 0,
      ignore: 0,
      reject: 0,
      dropped: 0,
      out: 0,
      delivered: 0,
      terminal: 0,
      streaming: 0,
      audit: 0,
    };
    this.inByType = {};
    this.outByType = {};
    this.cells = {};
    const labels = {
      in: 'frames in',
      accept: 'accepted',
      ignore: 'ignored',
      reject: 'rejected',
      dropped: 'dropped by runner',
      out: 'frames out',
      delivered: 'delivered',
      terminal: 'terminal',
      streaming: 'streaming',
      audit: 'net audit',
    };
    for (const [k, label] of Object.entries(labels)) {
      const dt = document.createElement('dt');
      dt.textContent = label;
      const dd = document.createElement('dd');
      dd.id = 'count-' + k;
      dd.textContent = '0';
      this.cells[k] = dd;
      this.countsEl.append(dt, dd);
    }
    this.pending = false;
    // Rows wait here and reach the DOM once per frame: appending and
    // scrolling per entry would lay the table out for every frame relayed.
    this.queued = { frames: [], audit: [] };

    for (const tab of root.querySelectorAll('[role="tab"]')) {
      tab.addEventListener('click', () => this.show(tab.dataset.tab));
    }
    root.querySelector('#inspector-clear').addEventListener('click', () => {
      this.frames.replaceChildren();
      this.audit.replaceChildren();
    });
  }

  show(name) {
    for (const tab of this.root.querySelectorAll('[role="tab"]')) {
      tab.setAttribute('aria-selected', String(tab.dataset.tab === name));
    }
    for (const panel of this.root.querySelectorAll('[data-panel]')) {
      panel.hidden = panel.dataset.panel !== name;
    }
  }

  /** One inspect entry from the host. */
  entry(e) {
    if (!e || typeof e !== 'object') return;
    const type = str(e.type) || '(none)';
    if (e.dir === 'in') {
      this.counts.in++;
      this.inByType[type] = (this.inByType[type] || 0) + 1;
      if (e.verdict === 'accept' || e.verdict === 'ignore' || e.verdict === 'reject') this.counts[e.verdict]++;
    } else if (e.dir === 'out') {
      this.counts.out++;
      this.outByType[type] = (this.outByType[type] || 0) + 1;
    }
    const tr = document.createElement('tr');
    tr.dataset.dir = str(e.dir);
    tr.dataset.type = str(e.type);
    tr.dataset.verdict = str(e.verdict);
    tr.dataset.slot = str(e.slot);
    addCells(tr, [
      [clock(e.time), 'time'],
      [e.dir === 'in' ? 'app→host' : e.dir === 'out' ? 'host→app' : str(e.dir), 'dir'],
      [str(e.slot), 'slot'],
      [str(e.type).replace(/^snug:/, ''), 'type'],
      [str(e.requestId), 'rid'],
      [str(e.verdict), 'verdict'],
      [str(e.code), 'code'],
    ]);
    tr.cells[3].title = str(e.type);
    // A reset's outcome is the host's note on a page message, not a frame:
    // its message is what there is to show.
    if (e.type === 'reset' && e.message) tr.cells[3].textContent = 'reset: ' + str(e.message);
    // The host's reason for a rejected or ignored frame.
    if (e.message) tr.title = str(e.message);
    this.queued.frames.push(tr);
    this.refresh();
  }

  /**
   * One frame the page did not relay (it is too big for the relay): counted
   * as a frame in, rejected, like the host's verdicts; and the answer the
   * page sent in the host's place, when there is one, as a frame out.
   */
  dropped(slot, frame, reason, answer) {
    const type = frame && typeof frame === 'object' && typeof frame.type === 'string' ? frame.type.slice(0, 64) : '';
    const requestId = frame && typeof frame === 'object' && typeof frame.requestId === 'string' ? frame.requestId.slice(0, 64) : '';
    const time = new Date().toISOString();
    const code = answer ? answerCode(answer) : '';
    this.counts.dropped++;
    const message = answer ? `${reason}; answered ${code} by the runner` : `${reason}; no answer (no plausible requestId, or an unknown type)`;
    this.entry({ time, dir: 'in', slot, type, requestId, verdict: 'reject', code, message });
    if (answer) this.entry({ time, dir: 'out', slot, type: answer.type, requestId: answer.requestId.slice(0, 64), code, message: 'the runner answered a frame it could not relay' });
  }

  /** One frame the page posted into an app frame. */
  delivered(frame) {
    this.counts.delivered++;
    if (frame && TERMINAL_TYPES.has(frame.type)) {
      if (frame.type === GEN.typeAppResponse && frame.ok === true && frame.streaming === true) {
        this.counts.streaming++;
      } else {
        this.counts.terminal++;
      }
    }
    this.refresh();
  }

  /** One net audit entry from the host. */
  auditEntry(a) {
    if (!a || typeof a !== 'object') return;
    this.counts.audit++;
    const tr = document.createElement('tr');
    tr.dataset.decision = str(a.decision ?? a.code);
    const ms = a.durationMs ?? a.duration_ms ?? a.duration;
    addCells(tr, [
      [clock(a.time), 'time'],
      [str(a.app), 'app'],
      [str(a.method), 'method'],
      [str(a.origin), 'origin'],
      [str(a.code || a.decision), 'decision'],
      [str(a.status ?? ''), 'status'],
      [str(a.bytes ?? ''), 'bytes'],
      [typeof ms === 'number' ? String(Math.round(ms)) : str(ms ?? ''), 'ms'],
    ]);
    this.queued.audit.push(tr);
    this.refresh();
  }

  refresh() {
    if (this.pending) return;
    this.pending = true;
    setTimeout(() => this.draw(), DRAW_MS);
  }

  draw() {
    if (!this.pending) return;
    this.pending = false;
    flush(this.frames, this.queued.frames);
    flush(this.audit, this.queued.audit);
    this.queued = { frames: [], audit: [] };
    for (const [k, v] of Object.entries(this.counts)) this.cells[k].textContent = String(v);
    this.countsEl.dataset.counts = JSON.stringify({
      ...this.counts,
      inByType: this.inByType,
      outByType: this.outByType,
    });
  }
}

// answerCode is the error code an answer carries: in its error object, or
// in the reason of a refusing one (open-url-result).
function answerCode(a) {
  return str(a.error ? a.error.code : a.reason);
}

function str(v) {
  return v === undefined || v === null ? '' : String(v);
}

function clock(t) {
  const d = t ? new Date(t) : new Date();
  if (Number.isNaN(d.getTime())) return str(t);
  return d.toTimeString().slice(0, 8) + '.' + String(d.getMilliseconds()).padStart(3, '0');
}

function addCells(tr, cells) {
  for (const [text, cls] of cells) {
    const td = document.createElement('td');
    td.className = cls;
    td.textContent = text;
    tr.append(td);
  }
}

// flush puts rows at the top, newest first, and drops the oldest past
// MAX_ROWS. It reads no layout, so the browser lays the table out once, when
// it paints.
function flush(tbody, rows) {
  if (rows.length === 0) return;
  if (rows.length > MAX_ROWS) rows = rows.slice(rows.length - MAX_ROWS);
  const excess = tbody.rows.length + rows.length - MAX_ROWS;
  for (let i = 0; i < excess; i++) tbody.lastElementChild.remove();
  tbody.prepend(...rows.reverse());
}
