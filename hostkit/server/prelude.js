// The host's prelude: the first script of every app document this server
// sends (PrepareDocument places it first in <head>; the header CSP lets it
// run before a packaged file's hash-only meta policy applies). It runs
// before any app code, in the one realm the app can run code in: every
// nested frame the app makes is a fresh opaque origin (the sandbox has no
// allow-same-origin), its URL loads are refused by frame-src/object-src
// 'none', and what could give one content (a srcdoc string, a javascript:
// URL) must pass the Trusted Types default policy made here, which refuses
// it (frame.HostCSP requires Trusted Types). So what this script removes
// stays removed in every browsing context the app can create.
//
// It removes:
// - the WebRTC constructors (REMOVED_GLOBALS): STUN/TURN datagrams leave
//   whatever connect-src says;
// - nested browsing contexts (NESTED_CONTEXT_ELEMENTS): in the sandbox one
//   can only load nothing or be blocked, and a blocked navigation still
//   sends its target's name out (docs/security.md);
// - the DOM builders that bypass Trusted Types: XSLTProcessor, setHTML and
//   Document.parseHTML (a sanitizer configured to keep <link rel=preconnect>);
// - trustedTypes, so the app can neither make a policy of its own (the CSP
//   names only "default") nor trip over one a library tries to make;
// and it refuses, from any script path, a link rel in BLOCKED_LINK_RELS
// (Chromium connects for them whatever the CSP says): in markup strings
// through the default policy, and through rel, relList, setAttribute(NS),
// Attr values and setAttributeNode/setNamedItem (the DOM paths that set an
// attribute without parsing markup).
//
// It also keeps a link's address out of the browser's sight until the
// user follows it: Chromium preconnects to the origin of an HTML <a> or
// <area> when the pointer is pressed on it, reading its href before any
// script hears of the press. An href that is not an in-page (#…) link or
// a non-http(s) scheme is held: the attribute holds HELD_LINK_PREFIX and
// then the address (the server does so in markup; here every DOM setter,
// and a MutationObserver on the document and every shadow root for what
// parsing makes), and every reader (getAttribute, Attr values, href and its
// parts, markup read back) answers the address, so app code and the runtime
// read what was written.
//
// Every check uses built-ins captured here, before the app can change them,
// and converts a value to a string once, so what is checked is what is set.
(() => {
  const G = globalThis;
  // Out of the DOM once it has run: markup an app reads back (head.innerHTML
  // += …) does not carry this script's text.
  document.currentScript?.remove();
  const removed = SNUG_REMOVED_GLOBALS;
  const blocked = { __proto__: null };
  for (const r of SNUG_BLOCKED_LINK_RELS) blocked[r] = true;
  const nestedNames = SNUG_NESTED_CONTEXT_ELEMENTS;
  const nested = { __proto__: null };
  for (const n of nestedNames) nested[n] = true;

  const { apply } = Reflect;
  const { defineProperty, getOwnPropertyDescriptor } = Object;
  const Str = String;
  const TypeErr = TypeError;
  const lower = String.prototype.toLowerCase;
  const indexOf = String.prototype.indexOf;
  const lastIndexOf = String.prototype.lastIndexOf;
  const slice = String.prototype.slice;
  const charCodeAt = String.prototype.charCodeAt;
  const exec = RegExp.prototype.exec;
  const matches = (re, s) => apply(exec, re, [s]) !== null;
  // In lower-cased markup: a srcdoc attribute given a value; a link start
  // tag, in HTML or (prefixed) in XML; an XML entity declaration, whose
  // replacement text can spell either with character references.
  const srcdocAttr = /srcdoc[\t\n\f\r ]*=/;
  const linkTag = /<([^\t\n\f\r />!?]*:)?link([\t\n\f\r />]|$)/;
  const nestedTag = new RegExp('<([^\\t\\n\\f\\r />!?]*:)?(' + nestedNames.join('|') + ')([\\t\\n\\f\\r />]|$)');
  const wsHas = WeakSet.prototype.has;
  const wsAdd = WeakSet.prototype.add;
  const relLists = new WeakSet();
  const has = (s, sub) => apply(indexOf, s, [sub]) >= 0;
  const refuse = (what) => {
    throw new TypeErr(`snug: ${what} is not allowed in the sandbox`);
  };

  for (const name of removed) delete G[name];
  delete G.XSLTProcessor;
  // No nested browsing context: the element classes go, and no path below
  // creates one of NESTED_CONTEXT_ELEMENTS.
  for (const name of ['HTMLIFrameElement', 'HTMLFrameElement', 'HTMLFrameSetElement', 'HTMLObjectElement', 'HTMLEmbedElement', 'HTMLFencedFrameElement', 'HTMLPortalElement', 'FencedFrameConfig']) delete G[name];
  for (const [owner, name] of [[G.Element && Element.prototype, 'setHTML'], [G.ShadowRoot && ShadowRoot.prototype, 'setHTML'], [G.Document, 'parseHTML']]) {
    if (owner) delete owner[name];
  }

  // A rel value's tokens, split on ASCII whitespace as HTML does; refuse a
  // blocked one.
  const checkRel = (v) => {
    const s = apply(lower, v, []);
    let start = 0;
    for (let i = 0; i <= s.length; i++) {
      const c = i < s.length ? apply(charCodeAt, s, [i]) : 32;
      if (c === 32 || c === 9 || c === 10 || c === 12 || c === 13) {
        if (i > start && blocked[apply(slice, s, [start, i])] === true) {
          refuse(`<link rel="${apply(slice, s, [start, i])}"> (the browser connects for it whatever the CSP says)`);
        }
        start = i + 1;
      }
    }
  };
  // A qualified name's local part, lower-cased.
  const localName = (qname) => {
    const n = apply(lower, qname, []);
    return apply(slice, n, [apply(lastIndexOf, n, [':']) + 1]);
  };
  const checkElement = (qname) => {
    const n = localName(qname);
    if (nested[n] === true) refuse(`a nested frame (<${n}>): it could only load nothing or be blocked`);
  };
  // An attribute named rel (any prefix or case) with a blocked token.
  const checkAttr = (qname, value) => {
    if (localName(qname) === 'rel') checkRel(value);
  };

  // Markup strings: every HTML and script sink goes through this policy.
  const tt = G.trustedTypes;
  if (tt) {
    tt.createPolicy('default', {
      createHTML(s, type, sink) {
        s = Str(s);
        sink = Str(sink);
        if (sink === 'HTMLIFrameElement srcdoc') refuse('a srcdoc frame');
        if (apply(indexOf, sink, ['Document write']) === 0 && has(s, '<')) {
          // Markup written in pieces is tokenized as one stream, so no
          // piece can be judged alone.
          refuse('document.write of markup (build the elements with the DOM or innerHTML)');
        }
        const l = apply(lower, s, []);
        if (matches(srcdocAttr, l)) refuse('a srcdoc frame');
        if (matches(linkTag, l)) refuse('a <link> in markup (create it with document.createElement("link"))');
        if (matches(nestedTag, l)) refuse('a nested frame (<iframe>, <object>, <embed> …): it could only load nothing or be blocked');
        if (has(l, '<!entity')) refuse('an XML entity declaration');
        // setHTMLUnsafe and parseHTMLUnsafe attach declarative shadow
        // roots, whose links no observer sees (held links, below).
        if (has(sink, 'HTMLUnsafe') && has(l, 'shadowrootmode')) refuse('a declarative shadow root made by script (use attachShadow)');
        return s;
      },
      createScript: (s) => s,
      createScriptURL: (s) => s,
    });
    delete G.trustedTypes;
  }

  // Replacing a method or accessor. A browser without one of them has no
  // path through it either.
  const wrap = (proto, name, make) => {
    const d = proto && getOwnPropertyDescriptor(proto, name);
    if (d) defineProperty(proto, name, make(d));
  };
  const method = (proto, name, f) => wrap(proto, name, (d) => ({ ...d, value: f(d.value) }));
  const setter = (proto, name, f) => wrap(proto, name, (d) => ({ ...d, set: f(d.set, d.get) }));

  // The DOM paths that make an element without parsing markup.
  const D = G.Document && Document.prototype;
  method(D, 'createElement', (orig) => function createElement(name, ...opts) {
    name = Str(name);
    checkElement(name);
    return apply(orig, this, opts.length ? [name, opts[0]] : [name]);
  });
  method(D, 'createElementNS', (orig) => function createElementNS(ns, name, ...opts) {
    name = Str(name);
    checkElement(name);
    return apply(orig, this, opts.length ? [ns, name, opts[0]] : [ns, name]);
  });
  method(G.DOMImplementation && DOMImplementation.prototype, 'createDocument', (orig) => function createDocument(ns, name, ...rest) {
    if (name !== null && name !== undefined) {
      name = Str(name);
      checkElement(name);
    }
    return apply(orig, this, rest.length ? [ns, name, rest[0]] : [ns, name]);
  });

  // Held links. An element's own getters, captured; hold(el) moves an
  // HTML <a> or <area>'s address behind the prefix when it needs to be.
  const E = G.Element && Element.prototype;
  const getter = (proto, name) => proto && getOwnPropertyDescriptor(proto, name)?.get;
  const nsOf = getter(E, 'namespaceURI');
  const nameOf = getter(E, 'localName');
  const getAttr = E.getAttribute;
  const setAttr = E.setAttribute;
  const held = SNUG_HELD_LINK_PREFIX[0];
  const startsWith = String.prototype.startsWith;
  const isHeld = (v) => typeof v === 'string' && apply(startsWith, v, [held]);
  const unheld = (v) => (isHeld(v) ? apply(slice, v, [held.length]) : v);
  const isLink = (el) => {
    try {
      const n = apply(nameOf, el, []);
      return (n === 'a' || n === 'area') && apply(nsOf, el, []) === 'http://www.w3.org/1999/xhtml';
    } catch {
      return false; // not an Element
    }
  };
  // An address the browser would preconnect to: not empty, not #…, and no
  // scheme other than http(s), as the URL parser reads it (C0 controls and
  // spaces before it skipped, tabs and newlines dropped). A held one has
  // the prefix's scheme, so holding twice changes nothing.
  const fromCharCode = String.fromCharCode;
  const needsHold = (v) => {
    let scheme = '';
    let started = false;
    for (let i = 0; i < v.length; i++) {
      const c = apply(charCodeAt, v, [i]);
      if (c === 9 || c === 10 || c === 13 || (!started && c <= 32)) continue;
      if (!started && c === 35) return false; // #
      started = true;
      if (c === 58) return scheme === '' || scheme === 'http' || scheme === 'https'; // :
      const l = c | 32;
      if ((l >= 97 && l <= 122) || (scheme !== '' && ((c >= 48 && c <= 57) || c === 43 || c === 45 || c === 46))) scheme += fromCharCode(l);
      else return true; // a relative address
    }
    return started;
  };
  const hold = (el) => {
    const v = el && isLink(el) && apply(getAttr, el, ['href']);
    if (v && needsHold(v)) apply(setAttr, el, ['href', held + v]);
  };

  // The DOM paths that set an attribute without parsing markup.
  method(E, 'setAttribute', (orig) => function setAttribute(name, value) {
    name = Str(name);
    if (apply(lower, name, []) === 'rel') {
      value = Str(value);
      checkRel(value);
    }
    const r = apply(orig, this, [name, value]);
    hold(this);
    return r;
  });
  method(E, 'setAttributeNS', (orig) => function setAttributeNS(ns, name, value) {
    name = Str(name);
    if (localName(name) === 'rel') {
      value = Str(value);
      checkRel(value);
    }
    const r = apply(orig, this, [ns, name, value]);
    hold(this);
    return r;
  });
  // An Attr's own name and value, read by its brand-checked getters (a
  // forged object throws as the original would).
  const A = G.Attr && Attr.prototype;
  const attrName = A && getOwnPropertyDescriptor(A, 'localName')?.get;
  const attrValue = A && getOwnPropertyDescriptor(A, 'value')?.get;
  const ownerOf = getter(A, 'ownerElement');
  const attrNS = getter(A, 'namespaceURI');
  const checkAttrNode = (attr) => {
    let name;
    try {
      name = apply(attrName, attr, []);
    } catch {
      return; // not an Attr: the original throws
    }
    checkAttr(name, apply(attrValue, attr, []));
  };
  for (const [proto, names] of [[E, ['setAttributeNode', 'setAttributeNodeNS']], [G.NamedNodeMap && NamedNodeMap.prototype, ['setNamedItem', 'setNamedItemNS']]]) {
    for (const name of names) {
      method(proto, name, (orig) => function (attr) {
        checkAttrNode(attr);
        const r = apply(orig, this, [attr]);
        hold(apply(ownerOf, attr, []));
        return r;
      });
    }
  }
  // Attr.value, and Node.nodeValue / textContent when the node is an Attr
  // (where null sets the empty string).
  const attrSetter = (nullable) => (orig) => function (v) {
    let name;
    try {
      name = apply(attrName, this, []);
    } catch {
      return apply(orig, this, [v]); // not an Attr
    }
    v = nullable && v === null ? '' : Str(v);
    checkAttr(name, v);
    const r = apply(orig, this, [v]);
    hold(apply(ownerOf, this, []));
    return r;
  };
  // What reads an href answers the address held behind the prefix.
  const attrGetter = (orig) => function () {
    const v = apply(orig, this, []);
    if (!isHeld(v)) return v;
    try {
      return apply(attrName, this, []) === 'href' && apply(attrNS, this, []) === null && isLink(apply(ownerOf, this, [])) ? unheld(v) : v;
    } catch {
      return v; // not an Attr
    }
  };
  const N = G.Node && Node.prototype;
  for (const [proto, name] of [[A, 'value'], [N, 'nodeValue'], [N, 'textContent']]) {
    wrap(proto, name, (d) => ({ ...d, get: attrGetter(d.get), set: attrSetter(proto === N)(d.set) }));
  }
  method(E, 'getAttribute', (orig) => function getAttribute(name) {
    const v = apply(orig, this, [name]);
    return isHeld(v) && isLink(this) && apply(lower, Str(name), []) === 'href' ? unheld(v) : v;
  });
  method(E, 'getAttributeNS', (orig) => function getAttributeNS(ns, name) {
    const v = apply(orig, this, [ns, name]);
    return isHeld(v) && isLink(this) && (ns === null || ns === '') && Str(name) === 'href' ? unheld(v) : v;
  });
  // <a> and <area>: href and its parts read and write the held address.
  const URLCtor = G.URL;
  const baseOf = getter(N, 'baseURI');
  const parts = ['href', 'origin', 'protocol', 'username', 'password', 'host', 'hostname', 'port', 'pathname', 'search', 'hash'];
  for (const C of [G.HTMLAnchorElement, G.HTMLAreaElement]) {
    const P = C && C.prototype;
    for (const part of parts) {
      wrap(P, part, (d) => ({
        ...d,
        get() {
          const v = apply(getAttr, this, ['href']);
          if (!isHeld(v)) return apply(d.get, this, []);
          try {
            return new URLCtor(unheld(v), apply(baseOf, this, []))[part];
          } catch {
            return part === 'href' ? unheld(v) : '';
          }
        },
        set: d.set && function (x) {
          const v = apply(getAttr, this, ['href']);
          if (part === 'href' || !isHeld(v)) {
            apply(d.set, this, [x]);
          } else {
            try {
              const u = new URLCtor(unheld(v), apply(baseOf, this, []));
              u[part] = x;
              apply(setAttr, this, ['href', u.href]);
            } catch {
              // an address that does not parse has no parts to set
            }
          }
          hold(this);
        },
      }));
    }
    method(P, 'toString', () => function toString() {
      return this.href;
    });
  }
  // Markup read back (innerHTML, outerHTML, getHTML) shows the addresses
  // as written: written again, the observer below holds them again.
  const replaceAll = String.prototype.replaceAll;
  const unholdMarkup = (orig) => function (...args) {
    return apply(replaceAll, apply(orig, this, args), [' href="' + held, ' href="']);
  };
  for (const P of [E, G.ShadowRoot && ShadowRoot.prototype]) {
    for (const name of ['innerHTML', 'outerHTML']) wrap(P, name, (d) => ({ ...d, get: unholdMarkup(d.get) }));
    method(P, 'getHTML', unholdMarkup);
  }
  // What parsing makes (innerHTML, insertAdjacentHTML, DOMParser, …) and
  // any other change to an href, in the document and in every shadow root,
  // is held before the next task, so before any press of a pointer.
  const qsa = E.querySelectorAll;
  const fragQsa = G.DocumentFragment.prototype.querySelectorAll;
  const rootOf = getter(E, 'shadowRoot');
  const NL = G.NodeList.prototype;
  const listLength = getter(NL, 'length');
  const item = NL.item;
  const MR = G.MutationRecord.prototype;
  const [typeOf, targetOf, addedOf] = ['type', 'target', 'addedNodes'].map((n) => getter(MR, n));
  const nodeTypeOf = getter(N, 'nodeType');
  const observe = MutationObserver.prototype.observe;
  const holdAll = (list) => {
    for (let i = 0, n = apply(listLength, list, []); i < n; i++) hold(apply(item, list, [i]));
  };
  const links = 'a[href],area[href]';
  const watch = (root) => {
    apply(observe, observer, [root, { subtree: true, childList: true, attributes: true, attributeFilter: ['href'] }]);
    holdAll(apply(root === document ? D.querySelectorAll : fragQsa, root, [links]));
    return root;
  };
  const observer = new MutationObserver((records) => {
    for (let i = 0; i < records.length; i++) {
      const r = records[i];
      if (apply(typeOf, r, []) === 'attributes') hold(apply(targetOf, r, []));
      const added = apply(addedOf, r, []);
      for (let j = 0, n = apply(listLength, added, []); j < n; j++) {
        const el = apply(item, added, [j]);
        if (apply(nodeTypeOf, el, []) !== 1) continue;
        hold(el);
        holdAll(apply(qsa, el, [links]));
        watchHosts(el);
      }
    }
  });
  // watchTree watches the shadow root of every element under root (found
  // with find), and the roots under those in turn; watchHosts does so for
  // an element and its own root. A root the parser attached (a declarative
  // one, which the server makes open) or cloneNode copied calls no
  // attachShadow.
  const watchTree = (root, find) => {
    const under = apply(find, root, ['*']);
    for (let i = 0, n = apply(listLength, under, []); i < n; i++) {
      const inner = apply(rootOf, apply(item, under, [i]), []);
      if (inner) watchTree(watch(inner), fragQsa);
    }
  };
  const watchHosts = (el) => {
    const own = apply(rootOf, el, []);
    if (own) watchTree(watch(own), fragQsa);
    watchTree(el, qsa);
  };
  watch(document);
  // A host's record can come before the parser attached its root: look
  // again once the document is parsed (first of all listeners: capture on
  // the window, added before any app script).
  addEventListener('DOMContentLoaded', () => watchTree(document, D.querySelectorAll), true);
  method(E, 'attachShadow', (orig) => function attachShadow(init) {
    return watch(apply(orig, this, [init]));
  });
  wrap(G.ElementInternals && ElementInternals.prototype, 'shadowRoot', (d) => ({
    ...d,
    get() {
      const root = apply(d.get, this, []);
      return root && watch(root);
    },
  }));
  // <link>.rel, and <link>.relList (its token list, or assigned a string).
  const L = G.HTMLLinkElement && HTMLLinkElement.prototype;
  setter(L, 'rel', (orig) => function (v) {
    v = Str(v);
    checkRel(v);
    return apply(orig, this, [v]);
  });
  wrap(L, 'relList', (d) => ({
    ...d,
    get() {
      const list = apply(d.get, this, []);
      apply(wsAdd, relLists, [list]);
      return list;
    },
    set(v) {
      v = Str(v);
      checkRel(v);
      return apply(d.set, this, [v]);
    },
  }));
  const T = G.DOMTokenList && DOMTokenList.prototype;
  const isRelList = (l) => apply(wsHas, relLists, [l]);
  method(T, 'add', (orig) => function add(...tokens) {
    if (isRelList(this)) {
      for (let i = 0; i < tokens.length; i++) checkRel((tokens[i] = Str(tokens[i])));
    }
    return apply(orig, this, tokens);
  });
  method(T, 'toggle', (orig) => function toggle(token, ...force) {
    if (isRelList(this)) checkRel((token = Str(token)));
    return apply(orig, this, force.length ? [token, force[0]] : [token]);
  });
  method(T, 'replace', (orig) => function replace(token, next) {
    if (isRelList(this)) checkRel((next = Str(next)));
    return apply(orig, this, [token, next]);
  });
  setter(T, 'value', (orig) => function (v) {
    if (isRelList(this)) checkRel((v = Str(v)));
    return apply(orig, this, [v]);
  });
})();
