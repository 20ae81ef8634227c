const DAY = 86400000;
export const today = () => Math.floor(Date.now() / DAY);
export function lastDays(day, n) {
  const out = [];
  for (let i = n - 1; i >= 0; i--) out.push(day - i);
  return out;
}
export const label = (d) => new Date(d * DAY).toISOString().slice(0, 10);
export const weekday = (d) => ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"][new Date(d * DAY).getUTCDay()];
