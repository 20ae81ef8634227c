// URLs as browsers read them. An app writes URLs the way fetch, <a href>
// and window.open take them: Unicode hosts and paths, spaces in a query.
// The frames stay strict (ASCII, RFC 3986), so the runtime serializes every
// URL it sends: the WHATWG parser first (new URL(u).href: the host to its
// xn-- form, non-ASCII and spaces percent-encoded as UTF-8), then what that
// serializer leaves raw but RFC 3986 refuses in a path, query or fragment
// (| ^ ` { } [ ] \, a second #, a % not followed by two hex digits) is
// percent-encoded too. A relative URL is refused: an app's document has no
// address worth resolving against.

import { CODE_MALFORMED } from "../gen/constants.mjs";

/**
 * The URL an app gave, serialized for a frame; throws (through fail, the
 * runtime's refusal) when it is not an absolute URL.
 *
 * @param {string|URL} input
 * @param {(code: string, message: string) => Error} fail
 * @returns {string}
 */
export const absoluteURL = (input, fail) => {
  let url;
  try {
    url = new URL(input);
  } catch {
    throw fail(CODE_MALFORMED, `${JSON.stringify(String(input))} is not an absolute URL: an absolute https:// URL is needed`);
  }
  const href = url.href;
  // Only http(s) URLs have a host the frames read; another scheme goes as
  // it is, for the host to refuse with its reason.
  if (!/^https?:$/.test(url.protocol)) return href;
  const pathStart = href.indexOf("/", url.protocol.length + 2);
  // What is left to encode is ASCII (the parser encoded the rest), which
  // encodeURIComponent writes as %XX, upper-case. The first # starts the
  // fragment; a later one is encoded.
  let fragment = false;
  const encode = (char) => {
    if (char == "#" && !fragment) {
      fragment = true;
      return char;
    }
    return encodeURIComponent(char);
  };
  return href.slice(0, pathStart) + href.slice(pathStart).replace(/%(?![\da-f]{2})|#|[^\w.~!$&'()*+,;=:@/?%-]/gi, encode);
};
