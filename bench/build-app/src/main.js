import { createStore } from "./store.js";
import { renderList, renderStats } from "./view.js";
import { today } from "./dates.js";

const store = createStore();
const $ = (id) => document.getElementById(id);

function render() {
  renderList($("list"), store.habits, today(), (id, day) => {
    store.toggle(id, day);
    render();
  });
  renderStats($("stats"), store.habits, today());
}

$("add").addEventListener("submit", (e) => {
  e.preventDefault();
  const name = $("name").value.trim();
  if (name) store.add(name);
  $("name").value = "";
  render();
});

store.load().then(render);
