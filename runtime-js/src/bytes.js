// Base64 <-> bytes for the db export/import, saveFile and base64 net
// bodies. atob/btoa work on "binary strings" (one char per byte). toBase64
// builds that string one byte at a time (Array.from's map): smaller than
// converting in chunks for String.fromCharCode's argument limit, and about
// 0.2 s slower on the largest import R6 allows (5 MiB; docs/decisions.md,
// Runtime budgets).

/** @param {string} s base64 text @returns {Uint8Array} */
export const fromBase64 = (s) => Uint8Array.from(atob(s), (c) => c.charCodeAt(0));

/** @param {Uint8Array|ArrayBuffer|ArrayLike<number>} b a view's bytes, a buffer, or an array of numbers @returns {string} */
export const toBase64 = (b) => btoa(Array.from(new Uint8Array(b.buffer || b, b.byteOffset, b.byteLength), (c) => String.fromCharCode(c)).join(""));
