// Entry point of dist/snug.js: installs the `snug` global.
import { snug } from "./snug.js";

globalThis.snug = snug;
