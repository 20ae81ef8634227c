// The Snug transport: frames over postMessage, as they are. The runtime runs
// inside a sandboxed iframe (origin "null"), so the only peer it trusts is
// window.parent, recognised by event.source, and it posts with targetOrigin
// "*" (a null origin cannot be named). Every frame that arrives is checked by
// the generated acceptors (../gen, from schemas/) and dropped when invalid,
// except that an invalid ok:false answer still ends its request (R3: it is
// terminal), with its error when that is valid and HOST_ERROR otherwise; a
// theme-change's theme that is no valid theme is left out, and an error
// code this runtime does not know renders as HOST_ERROR (R5).

import { CODE_HOST_ERROR, EVENT_THEME_CHANGE, TYPE_HOST_EVENT, TYPE_HOST_READY, VERSION } from "../gen/constants.mjs";
import { acceptError, acceptTheme } from "../gen/validate.mjs";

/**
 * accept maps each host→app frame type the runtime takes to its acceptor
 * (HOST_TO_APP, or the part of it a tree-shaken runtime's members need);
 * codes are the error codes it knows, space-separated (CODES_KNOWN, or the
 * core registry and those of a tree-shaken runtime's members: a runtime
 * without a capability never gets that capability's answers, R5).
 * @param {Record<string, (f: object) => boolean>} accept
 * @param {string} codes
 * @returns {(receive: (frame: object) => void) => (frame: object) => void}
 */
export const connect = (accept, codes) => (receive) => {
  const knows = registry(codes);
  addEventListener("message", (event) => {
    let frame = event.data;
    if (event.source != parent || frame?.v !== VERSION) return;
    if (!accept[frame.type]?.(frame)) {
      // Only an answer's ok:false is taken when invalid: it still ends its
      // request (R3).
      const endsRequest = frame.ok === false && frame.type != TYPE_HOST_READY && frame.type != TYPE_HOST_EVENT && accept[frame.type];
      if (!endsRequest) return;
      // A copy (the event's data is the app's too): the API layer reads its
      // type, requestId, ok and error.
      const error = acceptError(frame.error)
        ? frame.error
        : { code: CODE_HOST_ERROR, message: `the host ended the request with an invalid ${frame.type}`, retryable: false };
      frame = { ...frame, error };
    }
    if (frame.event == EVENT_THEME_CHANGE && !acceptTheme(frame.data?.theme)) {
      frame.data = { ...frame.data, theme: undefined };
    }
    if (frame.error && !knows(frame.error.code)) {
      frame.error = { ...frame.error, code: CODE_HOST_ERROR, hostCode: frame.error.code };
    }
    receive(frame);
  });
  return (frame) => parent.postMessage(frame, "*");
};

/**
 * registry(codes) says whether a code is one of codes (space-separated): R5
 * for the errors connect passes on, and for the code a refusal's reason
 * carries (the entry of a runtime with openUrl or saveFile hands it to
 * snug.js's knownCodes, for settled).
 * @param {string} codes
 * @returns {(code: string) => boolean}
 */
export const registry = (codes) => (code) => codes.split(" ").includes(code);
