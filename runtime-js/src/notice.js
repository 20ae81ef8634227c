// alert() in the Snug runner: the sandbox has no allow-modals, so the
// browser's alert() returns at once and shows nothing. The runtime shows the
// message in the page instead (noticeAlert), until the user presses its OK:
// in the flow above the body (so it covers none of the app and the frame
// grows to fit it), sticky at the top, taking no focus. Styled through the
// CSSOM, which the CSP allows. Only the Snug transport installs it (in every
// Snug runtime, whole or tree-shaken): an MCP Apps host's sandbox may allow
// modals.

const D = document;
let notices;

/** @param {unknown} [message] */
export const noticeAlert = (message = "") => {
  if (!notices) {
    notices = D.createElement("snug-notices");
    notices.style.cssText = "position:sticky;top:0;z-index:2147483647;display:grid;gap:6px;padding:8px";
  }
  const box = D.createElement("snug-notice");
  const ok = D.createElement("button");
  box.setAttribute("role", "alert");
  box.style.cssText =
    "display:flex;justify-content:space-between;gap:1em;padding:8px;white-space:pre-wrap;color:CanvasText;background:Canvas;border:1px solid;border-radius:6px";
  ok.textContent = "OK";
  ok.onclick = () => {
    box.remove();
    notices.childElementCount || notices.remove();
  };
  box.append(String(message), ok);
  notices.append(box);
  notices.isConnected || D.documentElement.insertBefore(notices, D.body);
};
