import { c } from "./c.js";
export const b = c + 1;
