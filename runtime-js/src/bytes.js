// Base64 <-> bytes for the db export/import and base64 net bodies. atob/btoa
// work on "binary strings" (one char per byte), so bytes are converted in
// chunks small enough for String.fromCharCode's argument limit.

/** @param {string} s base64 text @returns {Uint8Array} */
export const fromBase64 = (s) => Uint8Array.from(atob(s), (c) => c.charCodeAt(0));

/** @param {Uint8Array|ArrayBuffer|ArrayLike<number>} b @returns {string} */
export const toBase64 = (b) => {
  b = new Uint8Array(b.buffer || b, b.byteOffset, b.byteLength); // a view's bytes, a buffer, or an array of numbers
  let s = "";
  for (let i = 0; i < b.length; ) s += String.fromCharCode(...b.subarray(i, (i += 32768)));
  return btoa(s);
};
