// The Snug runner page. It owns the app frames and the host's own dialogs;
// the Go host behind /ws owns every decision. Frames cross this page
// unchanged in both directions: the host parses each one again.

import { Relay } from './relay.js';
import { Stage, safeColor } from './stage.js';
import { Inspector } from './inspector.js';
import { Confirms } from './confirm.js';
import { Makes } from './make.js';
import { GEN } from './gen.js';

const $ = (sel) => document.querySelector(sel);

const params = new URLSearchParams(location.search);
const wanted = params.getAll('app');

const inspector = new Inspector($('#inspector'));
const connEl = $('#conn');
const relay = new Relay(wsURL(), {
  message: onMessage,
  open: onOpen,
  state(s) {
    connEl.dataset.state = s;
    connEl.textContent = s === 'open' ? 'connected' : s;
    if (s === 'closed') {
      confirms.reset();
      makes.reset();
    }
  },
});
const stage = new Stage($('#stage'), relay, {
  delivered: (slot, frame) => inspector.delivered(frame),
  dropped: (slot, frame, reason, answer) => inspector.dropped(slot, frame, reason, answer),
});
const makes = new Makes(relay, stage, $('#make'));
const confirms = new Confirms(
  $('#confirm'),
  (id, decision) => {
    relay.send({ t: 'confirm-answer', id, decision });
  },
  { appName: dialogAppName, frames: (msg) => stage.frameRects(msg.slot) },
);

// dialogAppName names the asking app in a confirm dialog as "Name (key)":
// the display name comes from the installed app's own file (never from an
// announce), and the host's own key stands beside it. A net question arrives named that way by the host; an open-url
// or save-file question carries the app's key, named here from the host's
// app list.
function dialogAppName(msg) {
  const given = typeof msg.app === 'string' ? msg.app : '';
  if (msg.kind === 'net') return given;
  const key = stage.appOf(msg.slot) || given;
  const info = stage.apps.get(key);
  const name = info && typeof info.displayName === 'string' ? info.displayName : '';
  return name && name !== key ? `${name} (${key})` : key;
}

// Routing is by event.source; see Stage.route.
window.addEventListener('message', (ev) => stage.route(ev));

// The page was hidden or shown (another tab, a minimized window): the host
// tells this page's apps with a visibility host-event.
document.addEventListener('visibilitychange', () => {
  relay.send({ t: 'visibility', visible: document.visibilityState === 'visible' });
});

let connectedOnce = false;
async function onOpen() {
  // The user's locale first: host-ready carries it to every app mounted
  // after it.
  relay.send({ t: 'locale', locale: navigator.language });
  relay.send(theme.message());
  // Whether the host makes apps for this page's user: the boxes show, or
  // say why not.
  relay.send({ t: 'make-info' });
  // A page hidden while it reconnected still tells the host, so instances it
  // mounts now learn it right after their host-ready.
  if (document.visibilityState !== 'visible') relay.send({ t: 'visibility', visible: false });
  const reconnect = connectedOnce;
  connectedOnce = true;
  // The installed apps come over HTTP on each connection; later changes
  // (a rebuild) come as {"t":"apps"} messages. An app's announce never
  // changes this list: it is shown on that instance's header only.
  let apps;
  try {
    const res = await fetch('/apps.json', { cache: 'no-store' });
    apps = await res.json();
  } catch {
    return;
  }
  if (!Array.isArray(apps.apps)) return;
  setApps(apps.apps);
  renderNotices(Array.isArray(apps.notices) ? apps.notices : []);
  if (reconnect) {
    stage.remountAll();
  } else {
    for (const app of wanted) stage.mount(app);
  }
}

function setApps(apps) {
  stage.setApps(apps);
  renderApps(apps);
}

function onMessage(msg) {
  switch (msg.t) {
    case 'apps':
      if (Array.isArray(msg.apps)) setApps(msg.apps);
      break;
    case 'frame':
      if (typeof msg.slot === 'string') stage.deliver(msg.slot, msg.frame);
      break;
    case 'confirm':
      confirms.ask(msg);
      break;
    case 'confirm-cancel':
      confirms.cancel(msg.id);
      break;
    case 'inspect':
      inspector.entry(msg.entry);
      stage.noteInspect(msg.entry);
      break;
    case 'audit':
      inspector.auditEntry(msg.entry);
      break;
    case 'announce':
      // What one instance says about itself: shown on its header, marked
      // as the app's claim. The app list does not change.
      if (typeof msg.slot === 'string') stage.announced(msg.slot, msg);
      break;
    case 'ended':
      // The host stopped one app: it fell too far behind the page.
      if (typeof msg.slot === 'string') stage.ended(msg.slot, msg.reason);
      break;
    case 'reload':
      if (typeof msg.app === 'string') stage.reloadApp(msg.app);
      break;
    case 'make-info':
      makes.info(msg);
      break;
    case 'make-bytes':
    case 'make-round':
    case 'make-end':
      makes.message(msg);
      break;
  }
}

// renderNotices shows what the host says is in effect for every app (a
// development exemption), for as long as it is.
function renderNotices(lines) {
  const el = $('#notices');
  el.replaceChildren(
    ...lines.filter((l) => typeof l === 'string').map((l) => Object.assign(document.createElement('p'), { textContent: l })),
  );
  el.hidden = el.childElementCount === 0;
}

function renderApps(apps) {
  const list = $('#app-list');
  list.replaceChildren();
  for (const a of apps) {
    const li = document.createElement('li');
    const b = document.createElement('button');
    b.type = 'button';
    b.className = 'app-button';
    b.dataset.app = a.app;
    const icon = document.createElement('span');
    icon.className = 'icon';
    icon.setAttribute('aria-hidden', 'true');
    icon.textContent = a.iconEmoji || '▢';
    const color = safeColor(a.iconColor);
    if (color) icon.style.backgroundColor = color;
    const name = document.createElement('span');
    name.className = 'app-name';
    name.textContent = a.displayName || a.app;
    b.title = a.appId ? `${a.displayName || a.app} (${a.appId})` : a.app;
    b.append(icon, name);
    // The host's own key beside a display name: two apps may use one name.
    if (a.displayName && a.displayName !== a.app) {
      const key = document.createElement('span');
      key.className = 'app-key';
      key.textContent = a.app;
      b.append(key);
    }
    b.addEventListener('click', () => stage.mount(a.app));
    li.append(b);
    // An app whose last build failed: its diagnostics, and no instance
    // until a build works (serve --watch rebuilds it on save).
    if (Array.isArray(a.problems) && a.problems.length) {
      li.dataset.problems = a.broken ? 'broken' : 'last-build';
      b.disabled = !!a.broken;
      const pre = document.createElement('pre');
      pre.className = 'problems';
      pre.textContent = (a.broken ? 'Does not build:\n' : 'The last build failed (the previous one runs):\n') + a.problems.join('\n');
      li.append(pre);
    }
    list.append(li);
  }
}

// Theme: the runner's own look, and the mode the host tells the apps.
const theme = {
  mode: matchMedia('(prefers-color-scheme: dark)').matches ? 'dark' : 'light',
  button: $('#theme-toggle'),
  apply() {
    document.documentElement.dataset.theme = this.mode;
    this.button.setAttribute('aria-pressed', String(this.mode === 'dark'));
    this.button.textContent = this.mode === 'dark' ? 'Light theme' : 'Dark theme';
  },
  // message is the theme as the host passes it to the apps: the mode and
  // the documented token set, each read from this page's own stylesheet.
  message() {
    const style = getComputedStyle(document.documentElement);
    const tokens = {};
    for (const name of GEN.themeTokens) {
      const v = style.getPropertyValue(name).trim();
      if (v) tokens[name] = v;
    }
    return { t: 'theme', mode: this.mode, tokens };
  },
};
theme.apply();
theme.button.addEventListener('click', () => {
  theme.mode = theme.mode === 'dark' ? 'light' : 'dark';
  theme.apply();
  relay.send(theme.message());
});

const inspectorToggle = $('#inspector-toggle');
inspectorToggle.addEventListener('click', () => {
  const layout = $('.layout');
  const hidden = layout.classList.toggle('no-inspector');
  inspectorToggle.setAttribute('aria-pressed', String(!hidden));
});

function wsURL() {
  const scheme = location.protocol === 'https:' ? 'wss:' : 'ws:';
  return `${scheme}//${location.host}/ws`;
}
