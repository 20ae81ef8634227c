export function streak(days, today) {
  let n = 0;
  while (days.includes(today - n)) n++;
  return n;
}
export function percent(days, today, window) {
  let hit = 0;
  for (let i = 0; i < window; i++) if (days.includes(today - i)) hit++;
  return (hit / window) * 100;
}
export function longest(days) {
  const s = [...days].sort((a, b) => a - b);
  let best = 0, run = 0;
  for (let i = 0; i < s.length; i++) {
    run = i && s[i] === s[i - 1] + 1 ? run + 1 : 1;
    best = Math.max(best, run);
  }
  return best;
}
