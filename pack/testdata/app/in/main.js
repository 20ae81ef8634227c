import { state } from "./lib/state.js";
import { render } from "./lib/view.js";
import { shout } from "tiny-pkg";
import "./lib/widget.css";

await snug.ready;
const saved = await snug.db.get("state");
state.count = saved?.count ?? 0;
render(shout("count"), state.count);
const reply = await snug.ask("summarize", { text: "x" });
console.log(reply);
