// The Snug transport: frames over postMessage, as they are. The runtime runs
// inside a sandboxed iframe (origin "null"), so the only peer it trusts is
// window.parent, recognised by event.source, and it posts with targetOrigin
// "*" (a null origin cannot be named). Every frame that arrives is checked by
// the generated acceptors (../gen, from schemas/) and dropped when invalid;
// a theme-change's theme that is no valid theme is left out, and an error
// code this runtime does not know renders as HOST_ERROR (R5).

import { CODE_HOST_ERROR, EVENT_THEME_CHANGE, VERSION, isKnownCode } from "../gen/constants.mjs";
import { HOST_TO_APP, acceptTheme } from "../gen/validate.mjs";

/** @param {(frame: object) => void} receive @returns {(frame: object) => void} */
export const connect = (receive) => {
  addEventListener("message", (e) => {
    const f = e.data;
    if (e.source != parent || f?.v !== VERSION || !HOST_TO_APP[f.type]?.(f)) return;
    const { error: err, data } = f;
    if (f.event == EVENT_THEME_CHANGE && !acceptTheme(data?.theme)) f.data = { ...data, theme: undefined };
    if (err && !isKnownCode(err.code)) f.error = { ...err, code: CODE_HOST_ERROR, hostCode: err.code };
    receive(f);
  });
  return (f) => parent.postMessage(f, "*");
};
