// Entry point of dist/snug-mcp.js: the runtime over MCP Apps JSON-RPC, for
// apps served by `snuggen mcp` to MCP Apps hosts (snuggen build --target mcp-app).
// The forms first, as when they were a part of snug.js (a tree-shaken
// runtime gets dist/forms.js before it).
import "./forms.js";
import { ask, db, downloads, install, links, net, onPartial, openUrl, saveFile } from "./snug.js";
import { connect } from "./transport-mcp.js";

globalThis.snug = install(connect, { ask: onPartial(ask), db, net, openUrl, saveFile });
links(globalThis.snug);
downloads(globalThis.snug);
