import { lastDays, label } from "./dates.js";
import { streak, percent } from "./stats.js";

export function renderList(ul, habits, day, onToggle) {
  ul.replaceChildren(
    ...habits.map((h) => {
      const li = document.createElement("li");
      const name = document.createElement("strong");
      name.textContent = `${h.name} (${streak(h.days, day)}🔥)`;
      const days = document.createElement("div");
      days.className = "days";
      for (const d of lastDays(day, 14)) {
        const cell = document.createElement("button");
        cell.type = "button";
        cell.title = label(d);
        cell.className = "day" + (h.days.includes(d) ? " done" : "");
        cell.addEventListener("click", () => onToggle(h.id, d));
        days.append(cell);
      }
      li.append(name, days);
      return li;
    }),
  );
}

export function renderStats(el, habits, day) {
  const total = habits.reduce((n, h) => n + percent(h.days, day, 14), 0);
  el.textContent = habits.length ? `Average ${Math.round(total / habits.length)}% over two weeks` : "No habits yet";
}

export function renderDebug(el, habits) {
  el.textContent = JSON.stringify(habits, null, 2);
}
