// Entry point of dist/snug.js: the runtime over Snug frames, for Snug hosts.
import { install } from "./snug.js";
import { connect } from "./transport-snug.js";

globalThis.snug = install(connect);
