export function render(label, n) {
  document.querySelector("h1").textContent = `${label}: ${n}`;
}
export function neverUsed() {
  return "TREE_SHAKEN_AWAY";
}
