import { uid } from "./util.js";

export function createStore() {
  const habits = [];
  const save = () => (globalThis.snug ? snug.db.set("habits", habits) : Promise.resolve());
  return {
    habits,
    async load() {
      const saved = globalThis.snug ? await snug.db.get("habits") : null;
      if (Array.isArray(saved)) habits.splice(0, habits.length, ...saved);
      if (!habits.length) ["Read", "Walk", "Stretch"].forEach((n) => habits.push({ id: uid(), name: n, days: [] }));
    },
    add(name) {
      habits.push({ id: uid(), name, days: [] });
      save();
    },
    toggle(id, day) {
      const h = habits.find((x) => x.id === id);
      if (!h) return;
      const i = h.days.indexOf(day);
      if (i >= 0) h.days.splice(i, 1);
      else h.days.push(day);
      save();
    },
    remove(id) {
      const i = habits.findIndex((x) => x.id === id);
      if (i >= 0) habits.splice(i, 1);
      save();
    },
  };
}
