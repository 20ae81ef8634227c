// The host's own confirm dialog: a net request to an origin the app has no
// grant for, or an open-url request. It shows the app's name, the method and
// the full URL, and answers with the button's data-snug-confirm value. The
// app's frame cannot reach this dialog: it lives in the runner's document.

export class Confirms {
  /**
   * @param {HTMLDialogElement} dialog
   * @param {(id: string, decision: string) => void} answer
   * @param {(msg: any) => string} [appName] the name to show for the app
   *   a question came from (the host's own text when absent)
   */
  constructor(dialog, answer, appName) {
    this.dialog = dialog;
    this.answer = answer;
    this.appName = appName || ((msg) => String(msg.app || ''));
    this.queue = [];
    this.current = null;
    this.title = dialog.querySelector('#confirm-title');
    this.app = dialog.querySelector('#confirm-app');
    this.verb = dialog.querySelector('#confirm-verb');
    this.method = dialog.querySelector('#confirm-method');
    this.url = dialog.querySelector('#confirm-url');
    this.buttons = {};
    for (const b of dialog.querySelectorAll('[data-snug-confirm]')) {
      this.buttons[b.dataset.snugConfirm] = b;
      b.addEventListener('click', () => this.decide(b.dataset.snugConfirm));
    }
    // Escape closes a modal dialog: that is a "no".
    dialog.addEventListener('cancel', (ev) => {
      ev.preventDefault();
      this.decide('deny');
    });
  }

  /** Queues one confirm request from the host. */
  ask(msg) {
    if (typeof msg.id !== 'string' || typeof msg.url !== 'string') return;
    this.queue.push(msg);
    if (!this.current) this.next();
  }

  next() {
    const msg = this.queue.shift();
    this.current = msg || null;
    if (!msg) {
      if (this.dialog.open) this.dialog.close();
      return;
    }
    const openUrl = msg.kind === 'open-url';
    this.title.textContent = openUrl ? 'Open a link?' : 'Allow a network request?';
    this.app.textContent = this.appName(msg) || 'An app';
    this.verb.textContent = openUrl
      ? 'asks to open this address in a new browser tab.'
      : 'asks the host to make this request for it.';
    this.method.textContent = openUrl ? 'OPEN' : String(msg.method || 'GET');
    this.url.textContent = msg.url;
    this.buttons.always.hidden = openUrl;
    this.buttons.once.textContent = openUrl ? 'Open' : 'Allow once';
    this.buttons.deny.textContent = openUrl ? 'Cancel' : 'Deny';
    this.dialog.dataset.kind = openUrl ? 'open-url' : 'net';
    this.dialog.dataset.id = msg.id;
    if (!this.dialog.open) this.dialog.showModal();
    // Enter must never approve: the safe answer has the focus.
    this.buttons.deny.focus();
  }

  decide(decision) {
    const msg = this.current;
    if (!msg) return;
    // open-url has no "always": a link is opened once, from this click.
    if (msg.kind === 'open-url' && decision === 'always') decision = 'deny';
    if (msg.kind === 'open-url' && decision === 'once') {
      // This click is the user gesture that lets the page open a window;
      // the new tab gets no opener and no referrer.
      if (!isHTTPS(msg.url)) decision = 'deny';
      else window.open(msg.url, '_blank', 'noopener,noreferrer');
    }
    this.answer(msg.id, decision);
    this.next();
  }

  /** The host withdrew a question (its request ended first). */
  cancel(id) {
    this.queue = this.queue.filter((m) => m.id !== id);
    if (this.current && this.current.id === id) this.next();
  }

  /** The connection dropped: the host has ended every pending question. */
  reset() {
    this.queue = [];
    this.current = null;
    if (this.dialog.open) this.dialog.close();
  }
}

function isHTTPS(u) {
  try {
    return new URL(u).protocol === 'https:';
  } catch {
    return false;
  }
}
