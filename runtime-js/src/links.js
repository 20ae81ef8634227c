// Links and navigations in a frame that must stay on its one page. The
// sandbox has no popups, no downloads and no address of its own worth
// leaving for: a followed link would replace the app with the browser's
// error page (the runner's CSP refuses it). So the runtime takes a link's
// activation the way the web means it:
// - an http(s) link, static or inserted later, with or without target, by
//   a click, a modifier-click or a middle click: snug.openUrl (the host asks
//   the user and opens it in the browser). A link is every element the
//   browser follows: an HTML <a> or <area> with href, an SVG <a> with href
//   or xlink:href, inside a shadow root too (the click's composed path, not
//   its retargeted target; a closed root made by attachShadow tells its
//   link through a listener of its own);
// - an <a download> whose href is a blob: or data: URL: snug.saveFile (the
//   host asks the user and saves it); the blob comes from the app's own
//   URL.createObjectURL, which the runtime remembers (the sandbox's CSP lets
//   nothing fetch it back). This part (downloads) comes with saveFile, which
//   a build keeps for an app that names saveFile or download;
// - window.open(url): snug.openUrl, returning null as the sandbox does;
// - an in-page link (#section) scrolls as usual, and a link the app's own
//   handler took (preventDefault) is left alone;
// - any other link that would leave the page (a relative link, another
//   scheme) does not happen: the console says why and names the Snug way.
//   A script navigation cannot be stopped from inside the sandbox; the
//   console says why just before the frame goes (the runner shows it).

import { fromBase64 } from "./bytes.js";

const error = (reason) => console.error("snug:", reason.message || reason);
// The one word for a navigation the page cannot make.
const stay = (what) =>
  error(`${what}: an app is one page (the host stops one that leaves it); open sites with snug.openUrl("https://…"), use #id links inside it`);
// download takes an <a download> to snug.saveFile (true), once downloads
// is installed.
let download;
// The URL a link follows: href, or an SVG link's xlink:href (SVG 2 reads
// href first); null when it has neither.
const hrefOf = (link) => link.getAttribute("href") ?? link.getAttributeNS("http://www.w3.org/1999/xlink", "href");

/** @param {import("../snug").Snug} snug */
export const links = (snug) => {
  const anchor = HTMLAnchorElement.prototype;
  const click = anchor.click;

  // route takes the activation of a link (true), or leaves it to the
  // browser (false).
  const route = (link) => {
    const href = hrefOf(link).trim();
    if (/^(#|javascript:)/i.test(href)) return false;
    if (!download?.(link, href)) {
      if (/^https?:\/\//i.test(href)) snug.openUrl(href).catch(error);
      else stay("not following " + href);
    }
    return true;
  };
  const linkOn = (event) => event.composedPath().find((node) => /^(a|area)$/.test(node.localName) && hrefOf(node) != null);
  // The link a closed shadow root saw its click pass through: the composed
  // path seen from outside the root leaves its nodes out.
  const hidden = new WeakMap();
  const onClick = (event) => {
    const primaryOrMiddle = event.button == 0 || event.button == 1;
    if (event.defaultPrevented || !primaryOrMiddle) return;
    // The composed path reaches a link inside an open shadow root, which
    // the retargeted event.target hides.
    const link = linkOn(event) || hidden.get(event);
    if (link && route(link)) event.preventDefault();
  };
  // A closed root notes the link of a click inside it; onClick, the
  // window's listener, still decides last (the app's own handlers first).
  const attachShadow = Element.prototype.attachShadow;
  Element.prototype.attachShadow = function (init) {
    const root = attachShadow.call(this, init);
    // The innermost root's listener runs first and sees the whole path.
    const note = (event) => hidden.get(event) || hidden.set(event, linkOn(event));
    if (init?.mode == "closed") {
      root.addEventListener("click", note);
      root.addEventListener("auxclick", note);
    }
    return root;
  };

  // A link made in script and clicked without being in the document sends
  // no click event anywhere.
  anchor.click = function () {
    if (this.isConnected || !this.hasAttribute("href") || !route(this)) click.call(this);
  };
  addEventListener("click", onClick);
  addEventListener("auxclick", onClick);
  globalThis.open = (url) => {
    if (url) snug.openUrl(url).catch(error);
    return null;
  };
  // A script navigation (location.href = …, assign, replace, reload) cannot
  // be stopped from inside the sandbox (Location is unforgeable, and the
  // Navigation API has no events in an opaque origin): the console says why
  // the app is about to be stopped. Only the app's own navigation says so:
  // the browser runs beforeunload inside the script that navigates, so its
  // frames are on the stack below this handler's; when the host reloads or
  // replaces the frame (or its page), the handler runs alone.
  addEventListener("beforeunload", () => {
    // A second frame on the stack: a script of the app's is navigating.
    if (new Error().stack?.match(/:\d+:\d+/g)?.[1]) stay("leaving the page (location.href, assign, reload)");
  });
};

/** @param {import("../snug").Snug} snug */
export const downloads = (snug) => {
  const blobs = new Map();
  const { createObjectURL, revokeObjectURL } = URL;
  URL.createObjectURL = (object) => {
    const url = createObjectURL(object);
    blobs.set(url, object);
    return url;
  };
  URL.revokeObjectURL = (url) => {
    blobs.delete(url);
    revokeObjectURL(url);
  };
  // download saves the file an <a download>'s href names: a blob the app
  // made, or a data: URL's body.
  download = (link, href) => {
    if (!link.hasAttribute("download") || !/^(blob|data):/.test(href)) return false;
    // data:[type][;base64],body
    const [, type, base64, body] = /^data:([^,;]*)[^,]*?(;base64)?,(.*)$/s.exec(href) || [];
    let file;
    try {
      if (href.startsWith("blob:")) file = blobs.get(href);
      else if (body !== undefined) file = base64 ? fromBase64(decodeURIComponent(body)) : decodeURIComponent(body);
    } catch {
      return false; // a body that does not decode: not followed (route says so)
    }
    if (file == null) stay("not following " + href);
    else snug.saveFile(link.download || "download", file, type).catch(error);
    return true;
  };
};
