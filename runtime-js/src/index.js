// Entry point of dist/snug.js: the runtime over Snug frames, for Snug hosts,
// with every capability member. snuggen gen also bundles one entry like this
// per set of members an app may use (dist/shaken/), each with only its
// members and the acceptors of their answers.
// The transport first (its modules run nothing when loaded; first in the
// bundle, they compress better), then the forms, which ran before the rest
// when they were a part of snug.js (a tree-shaken runtime gets
// dist/forms.js before it).
import { connect, registry } from "./transport-snug.js";
import "./forms.js";
import { CODES_KNOWN } from "../gen/constants.mjs";
import { HOST_TO_APP } from "../gen/validate.mjs";
import { ask, db, downloads, install, knownCodes, links, net, onPartial, openUrl, saveFile } from "./snug.js";

globalThis.snug = install(connect(HOST_TO_APP, CODES_KNOWN), { ask: onPartial(ask), db, net, openUrl, saveFile });
knownCodes(registry(CODES_KNOWN));
links(globalThis.snug);
downloads(globalThis.snug);
