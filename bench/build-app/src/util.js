let n = 0;
export const uid = () => `h${Date.now().toString(36)}${(n++).toString(36)}`;
export const clamp = (x, lo, hi) => Math.min(hi, Math.max(lo, x));
