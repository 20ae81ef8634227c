import { b } from "./b.js";
export const a = 1;
console.log(b);
