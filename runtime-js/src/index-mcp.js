// Entry point of dist/snug-mcp.js: the runtime over MCP Apps JSON-RPC, for
// apps served by `snuggen mcp` to MCP Apps hosts (snuggen build --target mcp-app).
import { ask, db, downloads, install, net, onPartial, saveFile } from "./snug.js";
import { connect } from "./transport-mcp.js";

globalThis.snug = install(connect, { ask, db, net, saveFile, downloads, onPartial });
