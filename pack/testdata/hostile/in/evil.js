const s = "</script><!--<script>";
const r = /<!--<script>/i;
const t = `<!--<script>${s}</script>`;
document.getElementById("out").textContent = [s, r.source, t].join("|");
window.hostileDone = true;
