// The stage owns the app frames. Each frame is an <iframe sandbox="allow-scripts">
// loading its app document by URL (a srcdoc frame resolves href="#x" against
// the runner's URL and breaks hash-routed apps). Each app's URL is on a host
// of its own (<label>.localhost), so the browser runs every app in its own
// process and a busy app freezes only itself. The page's id for a frame
// element is its slot; the host keys its sessions by slot, never by what the
// app says about itself (R4).

import { GEN } from './gen.js';

const MIN_HEIGHT = 80;
const MAX_HEIGHT = 100000;

// The largest size class of any frame (R6). The relay closes the whole
// connection on a bigger message, so such a frame is not relayed: the page
// answers it here, as the host would.
export const MAX_RELAYED_FRAME_BYTES = GEN.maxRelayedFrameBytes;

// The host's answers to a frame past every size class (site.go, tooLarge).
const TOO_LARGE = GEN.tooLarge;

// wire reads one member of a frame as its JSON text has it: a Date as its
// toJSON string, a boxed primitive as its value (postMessage keeps both).
const wire = (x) =>
  x instanceof Date ? x.toJSON() : x instanceof Number || x instanceof String || x instanceof Boolean ? x.valueOf() : x;

/**
 * The answer the host sends to a frame the page cannot relay, or null when
 * it sends none. Such a frame is past the size class of every type, so the
 * host's verdict depends only on what it reads first (R1, R2, R6): v, then
 * type, then the size; and it answers only a plausible requestId (a string
 * of 1-128 code points, no unpaired surrogate). Nothing here reads the rest
 * of the frame.
 * @param {any} frame an object whose JSON text is an object
 */
export function tooLargeAnswer(frame) {
  const id = wire(frame.requestId);
  if (typeof id !== 'string' || id.length > 2 * TOO_LARGE.recoverMax || !id.isWellFormed()) return null;
  const points = [...id].length;
  if (points < TOO_LARGE.recoverMin || points > TOO_LARGE.recoverMax) return null;
  const v = wire(frame.v);
  const type = wire(frame.type);
  const known = typeof type === 'string' && Object.hasOwn(TOO_LARGE.byType, type);
  const row = known ? TOO_LARGE.byType[type] : TOO_LARGE.other;
  let i;
  if (!Number.isInteger(v)) i = row[0];
  else if (!TOO_LARGE.versions.includes(v)) i = row[1];
  else if (known || typeof type !== 'string') i = row[2];
  else return null; // an unknown type with a valid v is ignored (R2)
  return { ...TOO_LARGE.answers[i], requestId: id };
}

/**
 * Encodes an app's frame as JSON, or reports why it cannot be relayed.
 * @returns {{text?: string, reason?: string, bytes?: number, object?: boolean}}
 *   text when it can go as is, reason when it cannot (object: its JSON is
 *   an object), neither when JSON cannot encode it
 */
export function encodeFrame(frame) {
  let text;
  try {
    text = JSON.stringify(frame);
  } catch {
    // A value postMessage can clone but JSON cannot carry (a cycle, a
    // BigInt): the relay's own encoding decides (it sends nothing).
    return {};
  }
  if (text === undefined) return {};
  // Each UTF-16 unit is one to three UTF-8 bytes, so the length alone
  // decides most frames: encoding is needed only in between.
  if (text.length * 3 <= MAX_RELAYED_FRAME_BYTES) return { text };
  const over = text.length > MAX_RELAYED_FRAME_BYTES;
  const bytes = over ? text.length : new TextEncoder().encode(text).length;
  if (bytes > MAX_RELAYED_FRAME_BYTES) {
    return {
      reason: `${over ? 'at least ' : ''}${bytes} bytes of JSON, over the largest size class (${MAX_RELAYED_FRAME_BYTES} bytes): not relayed by the runner`,
      bytes,
      object: text[0] === '{',
    };
  }
  return { text };
}

export class Stage {
  /**
   * @param {HTMLElement} root
   * @param {import('./relay.js').Relay} relay
   * @param {{delivered: (slot: string, frame: any) => void,
   *   dropped: (slot: string, frame: any, reason: string, answer: any) => void}} hooks
   */
  constructor(root, relay, hooks) {
    this.root = root;
    this.relay = relay;
    this.hooks = hooks;
    this.empty = root.querySelector('#stage-empty');
    /** @type {Map<string, any>} installed apps by host key */
    this.apps = new Map();
    /** @type {Map<string, Instance>} running frames by slot */
    this.instances = new Map();
    this.nextSlot = 1;
    // The make boxes (make.js): whether the host makes apps for this page,
    // and the maker of an instance's "Change this app" box.
    this.makeReady = false;
    this.changeBox = null;
  }

  /** Shows or hides "Change" on the instances of apps the host made. */
  renderChangeButtons(ready) {
    this.makeReady = ready;
    for (const inst of this.instances.values()) inst.renderChange();
  }

  setApps(list) {
    this.apps.clear();
    for (const a of list) this.apps.set(a.app, a);
    for (const inst of this.instances.values()) {
      inst.renderHead(this.apps.get(inst.app));
      inst.renderChange();
    }
  }

  /** The host key of the app running in slot, or '' when none is. */
  appOf(slot) {
    const inst = typeof slot === 'string' ? this.instances.get(slot) : undefined;
    return inst ? inst.app : '';
  }

  /**
   * The app frames' rectangles in the viewport (the part of each that is
   * visible), the frame of slot marked as asking: where a click meant for
   * an app lands, which the confirm dialog keeps its controls away from.
   */
  frameRects(slot) {
    const vw = document.documentElement.clientWidth;
    const vh = document.documentElement.clientHeight;
    const out = [];
    for (const inst of this.instances.values()) {
      const r = inst.iframe.getBoundingClientRect();
      const rect = { left: Math.max(0, r.left), top: Math.max(0, r.top), right: Math.min(vw, r.right), bottom: Math.min(vh, r.bottom) };
      if (rect.right > rect.left && rect.bottom > rect.top) out.push({ rect, asking: inst.slot === slot });
    }
    return out;
  }

  /** Opens a new instance of app and returns its slot. */
  mount(app, before = null) {
    const info = this.apps.get(app);
    if (!info || info.broken) return null;
    const slot = 's' + this.nextSlot++;
    const inst = new Instance(this, slot, app, info);
    this.instances.set(slot, inst);
    // The host must know the slot before the frame can load or speak.
    this.relay.send({ t: 'mount', slot, app });
    this.root.insertBefore(inst.el, before);
    this.empty.hidden = true;
    return slot;
  }

  unmount(slot) {
    const inst = this.instances.get(slot);
    if (!inst) return null;
    this.instances.delete(slot);
    inst.dead = true;
    const next = inst.el.nextSibling;
    inst.el.remove();
    this.relay.send({ t: 'unmount', slot });
    this.empty.hidden = this.instances.size > 0;
    return next;
  }

  /** Replaces every frame of app with a fresh one (the app was rebuilt). */
  reloadApp(app) {
    for (const inst of [...this.instances.values()]) {
      if (inst.app !== app) continue;
      const next = this.unmount(inst.slot);
      const slot = this.mount(app, next);
      // An open change box (and the change it shows) stays with the app.
      if (slot && inst.changeForm) this.instances.get(slot).adoptChange(inst.changeForm);
    }
  }

  /** After a new connection the host knows no slot: start every frame again. */
  remountAll() {
    const old = [...this.instances.values()];
    for (const inst of old) {
      this.instances.delete(inst.slot);
      inst.dead = true;
      const next = inst.el.nextSibling;
      inst.el.remove();
      this.mount(inst.app, next);
    }
  }

  /**
   * Routes a window message by event.source: only a message whose source is
   * the contentWindow of a live frame goes to the host, tagged with that
   * frame's slot. Its origin is "null" for every sandboxed frame, so the
   * origin says nothing; the source is the identity.
   */
  route(ev) {
    if (!ev.source) return;
    for (const inst of this.instances.values()) {
      if (inst.iframe.contentWindow !== ev.source) continue;
      if (inst.dead) return;
      const frame = ev.data;
      const enc = encodeFrame(frame);
      if (enc.reason) {
        // Not relayed, but answered as the host answers it (R1), so the
        // app's request settles.
        const answer = enc.object ? tooLargeAnswer(frame) : null;
        this.hooks.dropped(inst.slot, frame, enc.reason, answer);
        if (answer) this.deliver(inst.slot, answer);
        return;
      }
      // A click in the app's frame activates this page too (the browser's
      // user activation reaches the frame's ancestors; an app cannot make
      // one): a link or download request arriving while it lasts is the
      // user's own, and the host lets it wait its turn.
      if (GEN.clickTypes.includes(frame?.type) && navigator.userActivation?.isActive && typeof frame.requestId === 'string') {
        this.relay.send({ t: 'click', slot: inst.slot, id: frame.requestId });
      }
      if (enc.text === undefined) {
        this.relay.send({ t: 'frame', slot: inst.slot, frame });
      } else {
        // The frame's JSON goes into the message as is: a large frame is
        // encoded once.
        this.relay.sendText(`{"t":"frame","slot":${JSON.stringify(inst.slot)},"frame":${enc.text}}`);
      }
      inst.observeOutgoing(frame);
      return;
    }
  }

  /** Shows what the instance in slot announced about itself, as its claim. */
  announced(slot, msg) {
    const inst = this.instances.get(slot);
    if (inst && !inst.dead) inst.renderClaim(msg);
  }

  /**
   * The host ended the instance in slot (its messages fell too far behind
   * the page): nothing more is relayed to or from it; the page's other
   * instances go on.
   */
  ended(slot, reason) {
    const inst = this.instances.get(slot);
    if (!inst || inst.dead) return;
    inst.dead = true;
    inst.setState('dead', 'stopped: fell behind');
    inst.state.title = typeof reason === 'string' ? reason : '';
  }

  /** Shows an inspect entry's outcome on its instance (a reset's answer). */
  noteInspect(e) {
    if (!e || typeof e.slot !== 'string') return;
    const inst = this.instances.get(e.slot);
    if (inst) inst.resetOutcome(e);
  }

  /** Posts a frame from the host into its slot's frame. */
  deliver(slot, frame) {
    const inst = this.instances.get(slot);
    if (!inst || inst.dead) return;
    const win = inst.iframe.contentWindow;
    if (!win) return;
    inst.observeIncoming(frame);
    // Sandboxed frames have an opaque origin: '*' is the only target origin
    // that reaches them. The window reference is what addresses the frame.
    win.postMessage(frame, '*');
    this.hooks.delivered(slot, frame);
  }
}

class Instance {
  constructor(stage, slot, app, info) {
    this.stage = stage;
    this.slot = slot;
    this.app = app;
    this.loads = 0;
    this.dead = false;

    const el = document.createElement('article');
    el.className = 'instance';
    el.dataset.slot = slot;
    el.dataset.app = app;
    el.dataset.state = 'loading';

    const head = document.createElement('div');
    head.className = 'instance-head';
    this.icon = document.createElement('span');
    this.icon.className = 'icon';
    this.icon.setAttribute('aria-hidden', 'true');
    this.name = document.createElement('strong');
    this.name.className = 'name';
    // What the app announced about itself: its claim, marked as such and
    // shown only here (the name beside it is the installed app's).
    this.claim = document.createElement('span');
    this.claim.className = 'claimed';
    this.claim.hidden = true;
    this.meta = document.createElement('span');
    this.meta.className = 'meta';
    this.state = document.createElement('span');
    this.state.className = 'meta state';
    this.state.textContent = 'loading';
    const spacer = document.createElement('span');
    spacer.className = 'spacer';
    const close = document.createElement('button');
    close.type = 'button';
    close.className = 'close';
    close.textContent = 'Close';
    close.title = 'Close this instance';
    close.addEventListener('click', () => stage.unmount(slot));
    // The user's explicit reset of the instance's parse-failure budget
    // (after PARSE_FAILED with no attempts left the host refuses asks until
    // the user resets). The host's answer shows in the inspector and here.
    const reset = document.createElement('button');
    reset.type = 'button';
    reset.className = 'reset';
    reset.textContent = 'Reset agent';
    reset.title = "Reset this instance's agent retry budget";
    reset.addEventListener('click', () => this.reset());
    this.resetButton = reset;
    // "Change this app": on an app the host made, when it makes apps.
    const change = document.createElement('button');
    change.type = 'button';
    change.className = 'change';
    change.textContent = 'Change';
    change.title = 'Describe a change and let the agent make it';
    change.hidden = true;
    change.addEventListener('click', () => this.toggleChange());
    this.changeButton = change;
    head.append(this.icon, this.name, this.claim, this.meta, this.state, spacer, change, reset, close);

    const iframe = document.createElement('iframe');
    // The sandbox is allow-scripts and nothing more (C2): an opaque origin,
    // no popups, no top navigation, no forms, no same-origin access.
    iframe.setAttribute('sandbox', 'allow-scripts');
    iframe.setAttribute('referrerpolicy', 'no-referrer');
    // Delegated features (GEN.frameAllow: clipboard-write, which the
    // browser still grants only on a user gesture); every other is off.
    iframe.setAttribute('allow', GEN.frameAllow);
    iframe.addEventListener('load', () => this.onLoad());
    // src is set before the element is inserted, so no about:blank load
    // fires first and the first load is the app document's.
    iframe.src = info.url;
    this.iframe = iframe;

    el.append(head, iframe);
    this.el = el;
    this.head = head;
    this.renderHead(info);
    this.renderChange();
  }

  renderChange() {
    const info = this.stage.apps.get(this.app);
    this.changeButton.hidden = !(this.stage.makeReady && info && info.made && this.stage.changeBox);
    if (this.changeButton.hidden && this.changeForm) this.changeForm.hidden = true;
  }

  adoptChange(form) {
    this.changeForm = form;
    this.head.after(form);
    this.renderChange();
  }

  toggleChange() {
    if (!this.changeForm) {
      this.changeForm = this.stage.changeBox(this);
      this.head.after(this.changeForm);
      return;
    }
    this.changeForm.hidden = !this.changeForm.hidden;
  }

  renderHead(info) {
    if (!info) return;
    this.icon.textContent = info.iconEmoji || '▢';
    this.icon.style.backgroundColor = safeColor(info.iconColor);
    this.name.textContent = info.displayName || info.app;
    this.iframe.title = info.displayName || info.app;
  }

  /**
   * Shows the instance's announced name as a claim: "says it is “…”", with
   * its appId in the tooltip, unless it matches the installed app's own
   * name and appId. Its icon and colour are not used: they could pass for
   * another app's.
   */
  renderClaim(msg) {
    const name = typeof msg.displayName === 'string' ? msg.displayName : '';
    const id = typeof msg.appId === 'string' ? msg.appId : '';
    if (!name) return;
    this.el.dataset.claimedName = name;
    this.el.dataset.claimedAppId = id;
    // A claim that matches the installed app's own metadata says nothing new.
    const info = this.stage.apps.get(this.app) || {};
    const same = name === (info.displayName || this.app) && (!id || id === info.appId);
    this.claim.hidden = same;
    if (same) return;
    this.claim.textContent = `says it is “${name}”`;
    this.claim.title = `What this app announced about itself${id ? ` (appId ${id})` : ''}; the host does not vouch for it. Installed as ${this.app}.`;
  }

  onLoad() {
    if (this.dead) return;
    this.loads++;
    this.stage.relay.send({ t: 'load', slot: this.slot });
    if (this.loads === 1) {
      this.setState('live', 'live');
      return;
    }
    // A second load means the frame navigated away from the document the
    // host served. Nothing more is posted to it; the host ends its work.
    this.dead = true;
    this.setState('dead', 'left its page: stopped');
    this.state.title =
      'The app navigated away from the page the host served (location.href, location.assign, reload, a form, or a link the runtime could not take), so the host stopped it. An app stays on one page: it updates the page, and opens other sites with snug.openUrl(url).';
  }

  reset() {
    if (this.dead) return;
    if (this.stage.relay.send({ t: 'reset', slot: this.slot })) {
      this.resetPending = true;
      this.el.dataset.reset = 'pending';
    }
  }

  /**
   * The host's inspect entry for a reset this instance asked for: the
   * relay's entry of type "reset" for this slot.
   */
  resetOutcome(e) {
    if (!this.resetPending || e.dir !== 'in' || e.type !== 'reset') return;
    this.resetPending = false;
    const ok = e.verdict === 'accept';
    this.el.dataset.reset = ok ? 'done' : 'failed';
    if (ok) this.el.dataset.agent = '';
    this.resetButton.title = ok ? 'The agent retry budget was reset' : `Reset failed: ${e.code || ''} ${e.message || ''}`.trim();
  }

  setState(state, text) {
    this.el.dataset.state = state;
    this.state.textContent = text;
  }

  /** Looks at what the app sent, for the runner's own display only. */
  observeOutgoing(frame) {
    if (!frame || typeof frame !== 'object') return;
    if (frame.type === GEN.typeAppEvent && frame.event === GEN.eventResize) {
      const h = frame.data && frame.data.height;
      if (Number.isInteger(h) && h >= 0 && h <= MAX_HEIGHT) {
        this.iframe.style.height = Math.max(MIN_HEIGHT, h) + 'px';
      }
    }
  }

  /** Shows the handshake the host made with this frame. */
  observeIncoming(frame) {
    if (!frame || typeof frame !== 'object') return;
    if (frame.type === GEN.typeAppResponse && frame.ok === false && frame.error && frame.error.code === GEN.codeParseFailed) {
      // The agent's parse-failure budget: with none left, asks are refused
      // until the user resets, so the button says so.
      const spent = frame.error.attemptsRemaining === 0;
      this.el.dataset.agent = spent ? 'needs-reset' : '';
      delete this.el.dataset.reset;
      this.resetButton.title = spent
        ? 'The agent failed to answer usable data too often: reset it to let this app ask again'
        : "Reset this instance's agent retry budget";
    }
    if (frame.type === GEN.typeHostReady) {
      const versions = Array.isArray(frame.protocolVersions) ? frame.protocolVersions.join(',') : '';
      this.meta.textContent = `${this.slot} · instance ${frame.instanceId} · v${versions}`;
      this.el.dataset.instanceId = String(frame.instanceId);
    }
  }
}

const ICON_COLOR = new RegExp(GEN.iconColor, 'i');

/**
 * Accepts an app's icon colour only when it is a colour: the host's one
 * grammar (internal/csscolor: hex, rgb()/hsl() of numbers, a named colour),
 * never var(), a gradient or url(), and one the browser reads as a colour.
 * The page sets it as background-color only.
 */
export function safeColor(c) {
  return typeof c === 'string' && ICON_COLOR.test(c) && CSS.supports('color', c) ? c : '';
}
