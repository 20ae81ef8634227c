// The host's own confirm dialog: a net request to an origin the app has no
// grant for, an open-url request, or a save-file request. It shows the
// app's name and, for a URL, the method and the full URL in its ASCII form
// with the Unicode form the host read from it beside it when they differ
// (a look-alike host shows), or, for a file, its name, size and type; and
// answers with the decision of the button the user
// clicked (its data-snug-confirm value). The app's frame cannot reach this
// dialog: it lives in the runner's document.
//
// Consent cannot be taken by timing (as browsers guard their permission
// prompts):
// - Arming. The dialog's controls ignore input until the dialog has been
//   visible for ARM_MS, and again after the page is shown or focused again,
//   the window is resized, or what the dialog asks changes (a new question,
//   the "always" box). A click meant for the app that lands on the dialog as
//   it opens does nothing. The dialog says `data-armed="true"` once armed.
// - Placement. The dialog is placed so that its controls are away from the
//   app frames (the asking one first), and the allow button is never where
//   it was for the question before; among equally good places it picks at
//   random, so an app cannot aim at it.
// - A swap is visible. When the question changes while the dialog is open
//   (the user answered, or the app withdrew its request), the dialog moves,
//   re-arms and says that this is another request.
// - "Always" is deliberate. It is a box to tick ("always allow this
//   origin for this app"), and only then does the allow button say and
//   answer "always"; ticking re-arms the dialog. A new question starts
//   unticked. Beside "once", a net question can be allowed "until I close
//   the page" (session): the host keeps that answer for this page only.

/** How long the dialog must have been visible before its controls act. */
export const ARM_MS = 500;

/** Space kept between the dialog and the window's edge. */
const EDGE = 12;

export class Confirms {
  /**
   * @param {HTMLDialogElement} dialog
   * @param {(id: string, decision: string) => void} answer
   * @param {{appName?: (msg: any) => string,
   *   frames?: (msg: any) => {rect: DOMRect, asking: boolean}[]}} [hooks]
   *   appName names the app a question came from (the host's own text when
   *   absent); frames lists the app frames on the page, marking the asking
   *   one, for the placement
   */
  constructor(dialog, answer, hooks = {}) {
    this.dialog = dialog;
    this.answer = answer;
    this.appName = hooks.appName || ((msg) => String(msg.app || ''));
    this.frames = hooks.frames || (() => []);
    this.queue = [];
    this.current = null;
    this.armed = false;
    this.armGen = 0;
    this.lastAllow = null; // the allow button's rect for the question before
    this.title = dialog.querySelector('#confirm-title');
    this.app = dialog.querySelector('#confirm-app');
    this.verb = dialog.querySelector('#confirm-verb');
    this.method = dialog.querySelector('#confirm-method');
    this.url = dialog.querySelector('#confirm-url');
    this.notice = dialog.querySelector('#confirm-notice');
    this.rememberRow = dialog.querySelector('#confirm-remember-row');
    this.remember = dialog.querySelector('[data-snug-confirm-remember]');
    this.origin = dialog.querySelector('#confirm-origin');
    this.readable = dialog.querySelector('#confirm-readable');
    this.readableRow = dialog.querySelector('#confirm-readable-row');
    this.file = dialog.querySelector('#confirm-file');
    this.size = dialog.querySelector('#confirm-size');
    this.type = dialog.querySelector('#confirm-type');
    this.rows = dialog.querySelectorAll('dl > [data-kinds]');
    this.controls = dialog.querySelector('.controls');
    this.deny = dialog.querySelector('[data-snug-confirm="deny"]');
    this.allow = dialog.querySelector('[data-snug-confirm="once"]');
    this.session = dialog.querySelector('[data-snug-confirm="session"]');
    this.ignored = 0;

    // Input that reaches a control before the dialog is armed is dropped
    // here, before the control sees it (a click on the box's label included).
    for (const type of ['click', 'mousedown', 'pointerdown', 'auxclick', 'dblclick']) {
      dialog.addEventListener(type, (ev) => {
        if (this.armed || !this.controls.contains(/** @type {Node} */ (ev.target))) return;
        ev.preventDefault();
        ev.stopImmediatePropagation();
        if (type === 'click') dialog.dataset.ignored = String(++this.ignored);
      }, true);
    }
    this.deny.addEventListener('click', () => this.decide('deny'));
    this.allow.addEventListener('click', () => this.decide(this.allow.dataset.snugConfirm));
    this.session.addEventListener('click', () => this.decide('session'));
    this.remember.addEventListener('change', () => {
      this.renderAllow();
      this.armLater();
    });
    // Escape closes a modal dialog: that is a "no", whenever it comes.
    dialog.addEventListener('cancel', (ev) => {
      ev.preventDefault();
      this.decide('deny');
    });
    // The user comes back to the page: whatever is under the pointer now was
    // not read yet.
    window.addEventListener('focus', () => this.armLater());
    document.addEventListener('visibilitychange', () => {
      if (document.visibilityState === 'visible') this.armLater();
      else this.disarm();
    });
    window.addEventListener('resize', () => {
      if (!this.current) return;
      this.place();
      this.armLater();
    });
  }

  /** Queues one confirm request from the host. */
  ask(msg) {
    if (typeof msg.id !== 'string') return;
    if (msg.kind === 'save-file' ? typeof msg.name !== 'string' || typeof msg.data !== 'string' : typeof msg.url !== 'string') return;
    this.queue.push(msg);
    if (!this.current) this.next('');
  }

  /**
   * Shows the next question, or closes the dialog. why says why the
   * question changed while the dialog stayed open ('' when it opens).
   */
  next(why) {
    const msg = this.queue.shift();
    this.current = msg || null;
    if (!msg) {
      // lastAllow is kept: the next dialog's allow button goes elsewhere too.
      this.disarm();
      if (this.dialog.open) this.dialog.close();
      return;
    }
    const swapped = this.dialog.open;
    const kind = msg.kind === 'open-url' || msg.kind === 'save-file' ? msg.kind : 'net';
    const text = KINDS[kind];
    this.dialog.dataset.kind = kind;
    this.title.textContent = text.title;
    this.app.textContent = this.appName(msg) || 'An app';
    this.verb.textContent = text.verb;
    for (const row of this.rows) row.hidden = !row.dataset.kinds.split(' ').includes(kind);
    if (kind === 'save-file') {
      this.file.textContent = msg.name;
      this.size.textContent = sizeText(Number(msg.size));
      this.type.textContent = String(msg.mimeType || '');
    } else {
      this.method.textContent = kind === 'open-url' ? 'OPEN' : String(msg.method || 'GET');
      this.url.textContent = msg.url;
      const readable = typeof msg.readable === 'string' && msg.readable !== msg.url ? msg.readable : '';
      this.readable.textContent = readable;
      this.readableRow.hidden = !readable;
      this.origin.textContent = originOf(msg.url);
    }
    this.remember.checked = false;
    this.rememberRow.hidden = kind !== 'net';
    this.deny.textContent = kind === 'net' ? 'Deny' : 'Cancel';
    this.renderAllow();
    this.notice.hidden = !swapped;
    this.notice.textContent = swapped ? why : '';
    this.dialog.dataset.id = msg.id;
    this.disarm();
    if (!this.dialog.open) this.dialog.showModal();
    this.place();
    // Enter must never approve: the safe answer has the focus.
    this.deny.focus();
    this.armLater();
  }

  /** The allow button says and answers what the box asks for. */
  renderAllow() {
    const kind = this.dialog.dataset.kind;
    const always = kind === 'net' && this.remember.checked;
    this.allow.dataset.snugConfirm = always ? 'always' : 'once';
    this.allow.textContent = always ? 'Always allow' : KINDS[kind].allow;
    // "Until I close the page" is a net answer, and not beside "always".
    this.session.hidden = kind !== 'net' || always;
  }

  disarm() {
    this.armed = false;
    this.armGen++;
    this.dialog.dataset.armed = 'false';
  }

  /** Disarms now and arms once the dialog has been visible for ARM_MS. */
  armLater() {
    if (!this.current) return;
    this.disarm();
    const gen = this.armGen;
    // The delay starts at the first frame painted with the dialog as it is.
    requestAnimationFrame(() => {
      setTimeout(() => {
        if (gen !== this.armGen || !this.current || document.visibilityState !== 'visible') return;
        this.armed = true;
        this.dialog.dataset.armed = 'true';
      }, ARM_MS);
    });
  }

  /**
   * Places the dialog: its controls away from the app frames (the asking
   * frame first, then any), and the allow button off the spot it had for
   * the question before; a random pick among the places that do as well.
   */
  place() {
    const d = this.dialog;
    d.style.margin = '0';
    d.style.left = '0px';
    d.style.top = '0px';
    const box = d.getBoundingClientRect();
    const ctl = this.controls.getBoundingClientRect();
    const allow = this.allow.getBoundingClientRect();
    const vw = document.documentElement.clientWidth;
    const vh = document.documentElement.clientHeight;
    const xs = spots(vw, box.width);
    const ys = spots(vh, box.height);
    const frames = this.frames(this.current) || [];
    const cands = [];
    for (const x of xs) {
      for (const y of ys) {
        const c = shift(ctl, x - box.left, y - box.top);
        const a = shift(allow, x - box.left, y - box.top);
        let asking = 0;
        let any = 0;
        for (const f of frames) {
          const o = overlap(c, f.rect);
          any += o;
          if (f.asking) asking += o;
        }
        const repeat = this.lastAllow ? overlap(grow(a, 8), this.lastAllow) > 0 : false;
        cands.push({ x, y, a, repeat, asking, any });
      }
    }
    const fresh = cands.filter((c) => !c.repeat);
    const pool = fresh.length ? fresh : cands;
    const best = Math.min(...pool.map((c) => c.asking));
    const tier = pool.filter((c) => c.asking === best);
    const least = Math.min(...tier.map((c) => c.any));
    const top = tier.filter((c) => c.any === least);
    const pick = top[randomIndex(top.length)];
    d.style.left = `${Math.round(pick.x)}px`;
    d.style.top = `${Math.round(pick.y)}px`;
    this.lastAllow = pick.a;
  }

  decide(decision) {
    const msg = this.current;
    if (!msg) return;
    // open-url and save-file have no "always": a link is opened, a file
    // saved, once, from this click.
    if (msg.kind !== 'net' && (decision === 'always' || decision === 'session')) decision = 'deny';
    // "always" only with the box ticked: a stray value is a "once".
    if (decision === 'always' && !this.remember.checked) decision = 'once';
    if (msg.kind === 'open-url' && decision === 'once') {
      // This click is the user gesture that lets the page open a window;
      // the new tab gets no opener and no referrer.
      if (!isHTTPS(msg.url)) decision = 'deny';
      else window.open(msg.url, '_blank', 'noopener,noreferrer');
    }
    if (msg.kind === 'save-file' && decision === 'once' && !saveFile(msg)) decision = 'deny';
    this.answer(msg.id, decision);
    this.next('Another request: read it before you answer.');
  }

  /** The host withdrew a question (its request ended first). */
  cancel(id) {
    this.queue = this.queue.filter((m) => m.id !== id);
    if (this.current && this.current.id === id) {
      this.next('The request shown before was withdrawn by the app. This is a different request: read it before you answer.');
    }
  }

  /** The connection dropped: the host has ended every pending question. */
  reset() {
    this.queue = [];
    this.current = null;
    this.disarm();
    if (this.dialog.open) this.dialog.close();
  }
}

/** What the dialog says for each kind of question. */
const KINDS = {
  net: { title: 'Allow a network request?', verb: 'asks the host to make this request for it.', allow: 'Allow once' },
  'open-url': { title: 'Open a link?', verb: 'asks to open this address in a new browser tab.', allow: 'Open' },
  'save-file': { title: 'Save a file?', verb: 'asks to save this file to your computer.', allow: 'Save' },
};

/**
 * Saves the file of a save-file question from the user's click (the user
 * gesture a download needs): the host's bytes as a blob URL of this page,
 * followed by an <a download> with the host's checked name. The blob URL
 * is revoked a minute later, when the download has long read it. Reports
 * whether the download started.
 */
function saveFile(msg) {
  let bytes;
  try {
    bytes = Uint8Array.from(atob(msg.data), (c) => c.charCodeAt(0));
  } catch {
    return false;
  }
  const url = URL.createObjectURL(new Blob([bytes], { type: String(msg.mimeType || 'application/octet-stream') }));
  const a = document.createElement('a');
  a.href = url;
  a.download = msg.name;
  a.rel = 'noopener';
  a.click();
  setTimeout(() => URL.revokeObjectURL(url), 60_000);
  return true;
}

/** A size as a person reads it, with the exact bytes. */
function sizeText(n) {
  if (!Number.isFinite(n) || n < 0) return '';
  const unit = n < 1024 ? '' : n < 1 << 20 ? ` (${(n / 1024).toFixed(1)} KB)` : ` (${(n / (1 << 20)).toFixed(1)} MB)`;
  return `${n.toLocaleString('en')} bytes${unit}`;
}

/** The left (or top) edges to try for a box of size n in a window of size w. */
function spots(w, n) {
  const far = Math.max(EDGE, w - n - EDGE);
  const mid = Math.max(EDGE, (w - n) / 2);
  return [...new Set([EDGE, Math.round(mid), Math.round(far)])];
}

function shift(r, dx, dy) {
  return { left: r.left + dx, top: r.top + dy, right: r.right + dx, bottom: r.bottom + dy };
}

function grow(r, m) {
  return { left: r.left - m, top: r.top - m, right: r.right + m, bottom: r.bottom + m };
}

/** The area two rectangles share. */
function overlap(a, b) {
  const w = Math.min(a.right, b.right) - Math.max(a.left, b.left);
  const h = Math.min(a.bottom, b.bottom) - Math.max(a.top, b.top);
  return w > 0 && h > 0 ? w * h : 0;
}

function randomIndex(n) {
  const u = new Uint32Array(1);
  crypto.getRandomValues(u);
  return u[0] % n;
}

function originOf(u) {
  try {
    return new URL(u).origin;
  } catch {
    return u;
  }
}

function isHTTPS(u) {
  try {
    return new URL(u).protocol === 'https:';
  } catch {
    return false;
  }
}
