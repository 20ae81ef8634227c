// Links and navigations in a frame that must stay on its one page. The
// sandbox has no popups, no downloads and no address of its own worth
// leaving for: a followed link would replace the app with the browser's
// error page (the runner's CSP refuses it). So the runtime takes a link's
// activation the way the web means it:
// - an http(s) link, static or inserted later, with or without target, by
//   a click, a modifier-click or a middle click: snug.openUrl (the host asks
//   the user and opens it in the browser);
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

const error = (e) => console.error("snug:", e.message || e);
// The one word for a navigation the page cannot make.
const stay = (what) => error(`${what}: an app is one page (the host stops one that leaves it); open sites with snug.openUrl("https://…"), use #id links inside it`);
// download takes an <a download> to snug.saveFile (true), once downloads
// is installed.
let download;

/** @param {import("../snug").Snug} snug */
export const links = (snug) => {
  const A = HTMLAnchorElement.prototype;
  const click = A.click;

  // route takes the activation of link a (true), or leaves it to the
  // browser (false).
  const route = (a, href = a.getAttribute("href").trim()) => {
    if (/^(#|javascript:)/i.test(href)) return false;
    download?.(a, href) || (/^https?:\/\//i.test(href) ? snug.openUrl(href).catch(error) : stay("not following " + href));
    return true;
  };
  const onClick = (e, a = !e.defaultPrevented && e.button < 2 && e.target.closest?.("a[href],area[href]")) =>
    a && route(a) && e.preventDefault();

  // A link made in script and clicked without being in the document sends
  // no click event anywhere.
  A.click = function () {
    (this.isConnected || !this.hasAttribute("href") || !route(this)) && click.call(this);
  };
  addEventListener("click", onClick);
  addEventListener("auxclick", onClick);
  globalThis.open = (u) => (u && snug.openUrl(u).catch(error), null);
  // A script navigation (location.href = …, assign, replace, reload) cannot
  // be stopped from inside the sandbox (Location is unforgeable, and the
  // Navigation API has no events in an opaque origin): the console says why
  // the app is about to be stopped. Only the app's own navigation says so:
  // the browser runs beforeunload inside the script that navigates, so its
  // frames are on the stack below this handler's; when the host reloads or
  // replaces the frame (or its page), the handler runs alone.
  addEventListener("beforeunload", () => new Error().stack?.match(/:\d+:\d+/g)?.[1] && stay("leaving the page (location.href, assign, reload)"));
};

/** @param {import("../snug").Snug} snug */
export const downloads = (snug) => {
  const blobs = new Map();
  const { createObjectURL, revokeObjectURL } = URL;
  URL.createObjectURL = (o) => {
    const u = createObjectURL(o);
    blobs.set(u, o);
    return u;
  };
  URL.revokeObjectURL = (u) => (blobs.delete(u), revokeObjectURL(u));
  download = (a, href) => {
    try {
      if (a.hasAttribute("download") && /^(blob|data):/.test(href)) {
        // data:[type][;base64],body
        const [, type, b64, body] = /^data:([^,;]*)[^,]*?(;base64)?,(.*)$/s.exec(href) || [];
        const file = href[0] == "b" ? blobs.get(href) : b64 ? fromBase64(decodeURIComponent(body)) : decodeURIComponent(body);
        return file == null ? stay("not following " + href) : snug.saveFile(a.download || "download", file, type).catch(error), 1;
      }
    } catch {}
  };
};
