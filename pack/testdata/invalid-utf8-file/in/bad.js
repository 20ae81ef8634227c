const a = 1;
const s = "café";
