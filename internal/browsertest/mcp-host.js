// The test's MCP Apps host: the published host-side AppBridge
// (@modelcontextprotocol/ext-apps) wired to the published MCP TypeScript
// client (@modelcontextprotocol/client) over streamable HTTP, rendering a
// tool's UI resource in a sandboxed iframe, as an MCP Apps host does. Nothing
// here knows Snug: it is the minimal wiring of those two packages.
import { AppBridge, PostMessageTransport, RESOURCE_MIME_TYPE, getToolUiResourceUri } from "@modelcontextprotocol/ext-apps/app-bridge";
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";

const info = { name: "snug-test-host", version: "1.0.0" };
const log = (window.hostLog = { opened: [], sizes: [], downloads: [], results: {}, changed: [] });
const clients = {}; // server name -> its client: a host keeps one client per configured server
const bridges = {}; // iframe id -> the bridge of the app shown there

window.connectHost = async (url, server = "default") => {
  const client = new Client(info, { capabilities: { extensions: { "io.modelcontextprotocol/ui": { mimeTypes: [RESOURCE_MIME_TYPE] } } } });
  // What the server says changed, as a host refreshes its lists.
  client.setNotificationHandler("notifications/tools/list_changed", () => log.changed.push(server + " tools"));
  client.setNotificationHandler("notifications/resources/list_changed", () => log.changed.push(server + " resources"));
  await client.connect(new StreamableHTTPClientTransport(new URL(url)));
  clients[server] = client;
  return (await client.listTools()).tools.map((t) => t.name);
};

// callTool is the model calling a tool of a server: its result as the
// host hands it to the model.
window.callTool = async (name, args, server = "default") => clients[server].callTool({ name, arguments: args });

// showApp calls a tool of a server and renders its UI resource with the
// tool's result in the iframe #id, bridged to that server's client only.
// caps are the host's capabilities the bridge advertises (a host without
// serverTools, say); every one by default.
window.showApp = async (name, sandbox, server = "default", id = "app", caps = { openLinks: {}, serverTools: {}, serverResources: {}, downloadFile: {} }) => {
  const client = clients[server];
  const tool = (await client.listTools()).tools.find((t) => t.name == name);
  const uri = getToolUiResourceUri(tool);
  const result = await client.callTool({ name, arguments: {} });
  log.results[id] = result;
  const { contents } = await client.readResource({ uri });
  document.getElementById(id)?.remove();
  const iframe = document.createElement("iframe");
  iframe.id = id;
  iframe.setAttribute("sandbox", sandbox);
  iframe.style.cssText = "width:600px;height:400px;border:0";
  document.body.append(iframe);
  const bridge = new AppBridge(client, info, caps, {
    hostContext: { theme: "light", locale: "en-US", styles: { variables: { "--color-background-primary": "#ffffff" } } },
  });
  bridge.onopenlink = async ({ url }) => (log.opened.push(url), {});
  bridge.ondownloadfile = async ({ contents }) => (log.downloads.push(contents), {});
  bridge.onsizechange = ({ height }) => {
    log.sizes.push(height);
    if (height) iframe.style.height = height + "px";
  };
  bridge.oninitialized = () => {
    bridge.sendToolInput({ arguments: {} });
    bridge.sendToolResult(result);
  };
  await bridge.connect(new PostMessageTransport(iframe.contentWindow, iframe.contentWindow));
  iframe.srcdoc = contents[0].text;
  window.bridge = bridges[id] = bridge;
  return contents[0].mimeType;
};

// teardownApp closes the app in the iframe #id as a host does: it sends
// ui/resource-teardown, waits for the view's answer, then removes the frame
// and closes the bridge. It returns how long the view took to answer, in ms.
window.teardownApp = async (id = "app") => {
  const bridge = bridges[id];
  const start = performance.now();
  await bridge.teardownResource({});
  const took = performance.now() - start;
  document.getElementById(id)?.remove();
  delete bridges[id];
  await bridge.close();
  return took;
};

window.setTheme = (theme) => window.bridge.sendHostContextChange({ theme, styles: { variables: { "--color-background-primary": theme == "dark" ? "#000000" : "#ffffff" } } });
