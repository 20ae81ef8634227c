const r = await fetch("https://api.example.com/x");
const w = window.fetch;
const ws = new WebSocket("wss://example.com");
const es = new EventSource("/events");
// Not the global: a local function and a property are fine.
function local() { const fetch = (u) => u; return fetch("ok"); }
const api = { fetch() { return 1; } };
api.fetch();
local();
export {};
