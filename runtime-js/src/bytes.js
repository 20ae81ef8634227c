// Base64 <-> bytes for the db export/import, saveFile and base64 net
// bodies. atob/btoa work on "binary strings" (one char per byte). toBase64
// builds that string one byte at a time (Array.from's map): smaller than
// converting in chunks for String.fromCharCode's argument limit, and about
// 0.2 s slower on the largest import R6 allows (5 MiB; docs/decisions.md,
// Runtime budgets).

/**
 * The bytes that base64 text encodes.
 * @param {string} base64
 * @returns {Uint8Array}
 */
export const fromBase64 = (base64) => Uint8Array.from(atob(base64), (char) => char.charCodeAt(0));

/**
 * The base64 text of some bytes.
 * @param {Uint8Array|ArrayBuffer|ArrayLike<number>} data a view's bytes, a buffer, or an array of numbers
 * @returns {string}
 */
export const toBase64 = (data) => {
  const bytes = new Uint8Array(data.buffer || data, data.byteOffset, data.byteLength);
  const binary = Array.from(bytes, (byte) => String.fromCharCode(byte)).join("");
  return btoa(binary);
};
