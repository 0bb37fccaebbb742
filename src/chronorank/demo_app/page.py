"""The demo app's single page: inline CSS and JS, it talks only to its own server."""

PAGE = """<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; connect-src 'self'; img-src data:">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>chronorank demo: before and after the temporal layer</title>
<style>
:root{--ink:#1d2330;--muted:#5d6678;--line:#d9dde6;--bg:#f7f8fb;--card:#fff;--accent:#2f6fde;--good:#1f8a5b;--bad:#b43b3b}
*{box-sizing:border-box}
body{margin:0;font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:var(--ink);background:var(--bg)}
header{padding:18px 24px 6px}h1{font-size:20px;margin:0 0 4px}header p{margin:0;color:var(--muted)}
form{display:flex;gap:8px;flex-wrap:wrap;padding:10px 24px}
#q{flex:1 1 420px;font-size:15px;padding:7px 9px;border:1px solid var(--line);border-radius:6px}
#kernel{flex:0 1 300px;padding:7px 9px;border:1px solid var(--line);border-radius:6px;font-family:ui-monospace,monospace;font-size:12.5px}
button{padding:7px 14px;border:0;border-radius:6px;background:var(--accent);color:#fff;font-size:14px;cursor:pointer}
#examples{padding:0 24px;display:flex;gap:6px;flex-wrap:wrap}
#examples a{font-size:12.5px;color:var(--accent);background:#eef2fb;border-radius:10px;padding:2px 8px;text-decoration:none;cursor:pointer}
#intent{padding:10px 24px 0;display:flex;flex-wrap:wrap;gap:6px}
.chip{background:#eef2fb;border:1px solid #d5def3;border-radius:12px;padding:2px 9px;font-size:12.5px}
main{display:grid;grid-template-columns:1fr 1fr;gap:16px;padding:12px 24px 24px}
.card{background:var(--card);border:1px solid var(--line);border-radius:8px;padding:12px 14px;min-width:0}
h2{font-size:15px;margin:0 0 8px}
ol{margin:0;padding:0;list-style:none}
li{border-bottom:1px solid var(--line);padding:6px 0}
li .top{display:flex;gap:8px;align-items:baseline}
li .id{font-weight:600}li .date{color:var(--muted);font-size:12.5px}
li .nums{margin-left:auto;font-variant-numeric:tabular-nums;font-size:12.5px;color:var(--muted);white-space:nowrap}
li small{display:block;color:var(--muted);overflow:hidden;text-overflow:ellipsis;white-space:nowrap}
li .note{color:#8a5a00;font-size:12px}
.up{color:var(--good)}.down{color:var(--bad)}
#status{padding:0 24px;color:var(--muted);font-size:12.5px}
#error{color:var(--bad);padding:0 24px}
@media (max-width:900px){main{grid-template-columns:1fr}}
</style>
</head>
<body>
<header><h1>chronorank demo</h1>
<p>Ask a question about the corpus. Left: the ranking by similarity alone. Right: the same
candidates through chronorank's temporal layer (query intent, decay kernel, fusion).</p></header>
<form id="f">
<input id="q" name="q" type="text" autocomplete="off" spellcheck="false" aria-label="question">
<input id="kernel" name="kernel" type="text" spellcheck="false" placeholder="kernel spec (blank = index default)" aria-label="kernel">
<button type="submit">Search</button>
</form>
<div id="examples"></div>
<div id="intent"></div>
<div id="error"></div>
<main>
<section class="card"><h2>Before: similarity only</h2><ol id="before"></ol></section>
<section class="card"><h2>After: time-aware</h2><ol id="after"></ol></section>
</main>
<p id="status"></p>
<script>
(function () {
"use strict";
function $(id) { return document.getElementById(id); }
function esc(s) { return String(s === null || s === undefined ? "" : s).replace(/[&<>"]/g, function (c) { return { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;" }[c]; }); }
function f3(x) { return x === null || x === undefined ? "\\u2014" : x.toFixed(3); }
// ages are never negative: a page dated after the reference point is "N d after" it
function age(a, ref) {
  if (a === null || a === undefined) return "undated";
  if (a < 0) return Math.round(-a) + "d after " + (ref || "now");
  return a >= 730 ? (a / 365.25).toFixed(1) + "y old" : Math.round(a) + "d old";
}
function item(r, after) {
  var mv = "";
  if (after) { var d = r.rank_before - r.rank; mv = d > 0 ? ' <span class="up">\\u25b2' + d + "</span>" : d < 0 ? ' <span class="down">\\u25bc' + (-d) + "</span>" : ""; }
  var nums = after ? formula(r) : "sim " + f3(r.similarity);
  return "<li><div class=top><span>" + r.rank + ".</span><span class=id>" + esc(r.id) + "</span>" + mv + "<span class=date>" + esc(r.date || "undated") + (after ? " \\u00b7 " + age(r.age_days, ref) : "") + "</span><span class=nums>" + nums + "</span></div>" +
    (after && r.notes.length ? "<div class=note>" + esc(r.notes.join("; ")) + "</div>" : "") + "<small>" + esc(r.snippet) + "</small></li>";
}
function chips(res) {
  var it = res.intent, c = [["mode", it.mode], ["sensitivity", it.time_sensitivity.toFixed(2)]];
  if (it.target) c.push(["target", (it.target.start || "") + " \\u2192 " + (it.target.end || "")]);
  c.push(["topical query", "\\u201c" + it.topical_query + "\\u201d"]);
  if (it.matched.length) c.push(["matched", it.matched.join(", ")]);
  c.push(["kernel", res.kernel], ["combine", res.combine], ["effective strength", res.effective_strength.toFixed(3)], ["as of", res.now]);
  return c.map(function (x) { return '<span class="chip">' + esc(x[0]) + ": <b>" + esc(x[1]) + "</b></span>"; }).join("");
}
var last = null, ref = "now", eff = 1, combine = "gated_multiply";
// the score as the product that gives it: similarity x the time weight (the strategy's
// factor of the decay) x what the topic rule applied, so the numbers shown recompute
function formula(r) {
  var w = combine === "gated_multiply" ? 1 - eff + eff * r.decay : combine === "multiply" ? Math.pow(r.decay, eff) : null;
  if (w === null || r.decay === null || r.similarity === null) return "sim " + f3(r.similarity) + " \\u00b7 decay " + f3(r.decay) + " \\u2192 " + f3(r.score);
  var base = r.similarity * w, out = "sim " + f3(r.similarity) + " \\u00d7 time " + f3(w);
  if (Math.abs(base - r.score) > 5e-4 && base > 0) out += " \\u00d7 topic " + (r.score / base).toPrecision(3);
  return '<span title="time = ' + (combine === "multiply" ? "decay ^ s" : "1 \\u2212 s + s \\u00d7 decay") + ", decay " + f3(r.decay) +
    ", s = effective strength " + eff.toFixed(3) + '">' + out + " \\u2192 " + f3(r.score) + "</span>";
}
function search() {
  var q = $("q").value.trim(); if (!q) return;
  var url = "/api/search?k=10&q=" + encodeURIComponent(q);
  if ($("kernel").value.trim()) url += "&kernel=" + encodeURIComponent($("kernel").value.trim());
  $("error").textContent = "";
  fetch(url).then(function (r) { return r.json().then(function (b) { return { ok: r.ok, body: b }; }); }).then(function (x) {
    if (!x.ok) { $("error").textContent = x.body.error; return; }
    var res = x.body; last = res;
    ref = res.intent.target ? "the asked time" : "now";
    eff = res.effective_strength; combine = res.combine;
    $("intent").innerHTML = chips(res);
    $("before").innerHTML = res.before.map(function (r) { return item(r, false); }).join("");
    $("after").innerHTML = res.after.map(function (r) { return item(r, true); }).join("");
    $("status").textContent = "answered in " + res.took_ms + " ms" + (res.dense_complete === false ? " \\u00b7 dense: " + res.dense : "");
    document.body.setAttribute("data-ready", "1");
  }).catch(function (e) { $("error").textContent = String(e); });
}
$("f").addEventListener("submit", function (e) { e.preventDefault(); search(); });
fetch("/api/health").then(function (r) { return r.json(); }).then(function (h) {
  $("status").textContent = h.documents + " documents \\u00b7 embedder " + h.embedder + " \\u00b7 as of " + h.now + " \\u00b7 " + h.source + (h.dense_complete === false ? " \\u00b7 dense: " + h.dense : "");
  $("examples").innerHTML = h.examples.map(function (e) { return "<a>" + esc(e) + "</a>"; }).join("");
  Array.prototype.forEach.call($("examples").children, function (a) { a.addEventListener("click", function () { $("q").value = a.textContent; search(); }); });
  // never open on empty panels: the question in the address, else the first example
  var initial = new URLSearchParams(location.search).get("q") || h.examples[0];
  if (initial) { $("q").value = initial; search(); }
});
window.chronorankDemo = { search: search, last: function () { return last; }, age: age };
})();
</script>
</body>
</html>
"""
