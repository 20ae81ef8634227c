// What the runner's sandbox takes from two web idioms, given back. It has no
// allow-modals and no allow-forms, so:
//
//   - alert() returns at once and shows nothing. noticeAlert shows the
//     message in the page instead, until the user presses its OK: in the
//     flow above the body (so it covers none of the app and the frame grows
//     to fit it), sticky at the top, taking no focus, styled through the
//     CSSOM (which the CSP allows).
//   - a <form method="dialog"> never closes its <dialog>: the browser
//     refuses the submission ("Blocked form submission"). The runtime fires
//     the submit event itself (snug.js); when no handler cancels it, the
//     dialog closes with the submitter's value, as on the open web, so the
//     <dialog> that replaces confirm() works as written.
//
// It is a bundle of its own (dist/modals.js, entry index-modals.js) that
// snuggen build appends to the Snug runtime of an app whose scripts say
// "alert" or whose page says "dialog": an app that uses neither pays nothing,
// and an MCP Apps host's sandbox may allow both.

let notices; // the element that holds the notices, made on first use

/** @param {unknown} [message] */
export const noticeAlert = (message = "") => {
  if (!notices) {
    notices = document.createElement("snug-notices");
    notices.style.cssText = "position:sticky;top:0;z-index:2147483647;display:grid;gap:6px;padding:8px";
  }
  const box = document.createElement("snug-notice");
  const ok = document.createElement("button");
  box.setAttribute("role", "alert");
  box.style.cssText =
    "display:flex;justify-content:space-between;gap:1em;padding:8px;white-space:pre-wrap;color:CanvasText;background:Canvas;border:1px solid;border-radius:6px";
  ok.textContent = "OK";
  ok.onclick = () => {
    box.remove();
    if (notices.childElementCount == 0) notices.remove();
  };
  box.append(String(message), ok);
  notices.append(box);
  if (!notices.isConnected) document.documentElement.insertBefore(notices, document.body);
};

/**
 * A submit event that reached the window uncancelled closes a
 * method="dialog" form's dialog, with the submitter's value.
 * @param {SubmitEvent} event
 */
export const dialogSubmit = (event) => {
  const form = event.target;
  if (!event.defaultPrevented && form.method == "dialog") form.closest("dialog")?.close(event.submitter?.value);
};
