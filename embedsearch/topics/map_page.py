"""The topic map's page: layout, side panel and script, as a ``str.format`` template (braces doubled) that
``maps.render_html`` fills with the plot, the documents and the search endpoint. On a narrow screen the
legend folds into the side panel; topic labels are placed inside the plot without overlapping; a search
rings its papers on the map and lists them beside it."""

PAGE = """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>{title}</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>
body {{ font-family: system-ui, sans-serif; margin: 0; display: flex; height: 100vh; }}
#side {{ width: 360px; padding: 12px; overflow-y: auto; border-right: 1px solid #ddd; box-sizing: border-box; }}
#map {{ flex: 1; min-width: 0; }}
#links {{ font-size: 13px; margin: 0 0 8px; }}
@media (max-width: 700px) {{
  body {{ flex-direction: column; height: auto; }}
  #side {{ width: 100%; border-right: none; border-bottom: 1px solid #ddd; max-height: 45vh; }}
  #map, #plotly-map {{ height: 70vh !important; }}
}}
#search {{ width: 100%; padding: 6px; font-size: 14px; box-sizing: border-box; }}
#count {{ color: #555; margin: 6px 0 12px; font-size: 13px; }}
#paper h3 {{ font-size: 14px; margin: 8px 0 4px; }} #paper p {{ font-size: 13px; line-height: 1.4; }}
.topic {{ color: #555; font-size: 12px; }}
#found {{ padding-left: 22px; font-size: 13px; }} #found li {{ margin: 2px 0; }}
#found button {{ all: unset; display: block; cursor: pointer; color: #1a56a0; white-space: nowrap; overflow: hidden;
  text-overflow: ellipsis; max-width: 100%; }}
#found button:hover, #found button:focus {{ text-decoration: underline; }}
#legend-list ul {{ list-style: none; padding: 0; font-size: 13px; }} #legend-list li {{ margin: 2px 0; }}
#legend-list button {{ all: unset; cursor: pointer; }} .swatch {{ display: inline-block; width: 10px; height: 10px;
  border-radius: 5px; margin-right: 6px; }} .hidden-topic {{ opacity: 0.4; }}
@media (min-width: 701px) {{ #legend-list {{ display: none; }} }}
</style></head><body>
<div id="side"><h2 style="font-size:16px">{title}</h2>{links}
<input id="search" type="search" placeholder="{placeholder}" aria-label="search">
<div id="count">{counted}</div><ol id="found" aria-label="papers found"></ol>
<details id="legend-list"><summary>Topics</summary><ul></ul></details>
<div id="paper"><p>Click a point to read its abstract.</p></div></div>
<div id="map">{plot}</div>
<script>
const DOCS = {docs};
const API = {api};
const BELOW = {below};  // per topic label: the lowest of its points, where a label moved below them sits
const plot = document.getElementById("plotly-map");
const BY_ID = new Map(DOCS.map(d => [d.id, d]));
const COUNTED = "{counted}";
async function show(i) {{
  const d = DOCS[i];
  document.getElementById("paper").innerHTML = "";
  const h = document.createElement("h3"); h.textContent = d.title || d.id;
  const t = document.createElement("div"); t.className = "topic"; t.textContent = d.id + " · " + d.label;
  const p = document.createElement("p"); p.textContent = d.text || "Loading…";
  document.getElementById("paper").append(h, t, p);
  if (API) {{  // served: the text comes from the API when asked for, not inside the page
    fetch("/documents/" + encodeURIComponent(d.id) + "?display=true").then(r => r.json())
      .then(doc => {{ p.textContent = doc.display ? doc.display.text : doc.error; }})
      .catch(() => {{ p.textContent = "The abstract could not be loaded."; }});
    const a = document.createElement("a"); a.href = "/paper/" + encodeURIComponent(d.id); a.textContent = "Open the paper's page";
    document.getElementById("paper").append(a);
  }}
}}
plot.on("plotly_click", ev => show(ev.points[0].customdata[0]));
const HIGHLIGHT = plot.data.length - 1;
// Ring ``hits`` on the map and list them in the side panel (a click reads one and rings it alone).
function ring(hits, note, names) {{
  Plotly.restyle(plot, {{x: [hits.map(d => d.x)], y: [hits.map(d => d.y)], customdata: [hits.map(d => [d.i])],
                        text: [hits.map(d => d.id)]}}, [HIGHLIGHT]);
  const count = document.getElementById("count");
  count.textContent = note === null ? COUNTED : note;
  count.dataset.matches = hits.length;
  const found = document.getElementById("found");
  found.replaceChildren(...(hits.length > 1 || names ? hits : []).map((d, n) => {{
    const b = document.createElement("button");
    b.textContent = (names && names[n]) || d.title || (d.text || d.id).slice(0, 120);
    b.addEventListener("click", () => {{ show(d.i); highlightOne(d); }});
    const li = document.createElement("li"); li.append(b); return li;
  }}));
}}
function highlightOne(d) {{
  Plotly.restyle(plot, {{x: [[d.x]], y: [[d.y]], customdata: [[[d.i]]], text: [[d.id]]}}, [HIGHLIGHT]);
}}

// Narrow screens: the legend folds into the side panel, so the plot keeps the width. Labels (which plotly
// keeps inside the plot) never overlap: each, largest topic first, stays above its points, else moves below
// them, else is dropped (the folded legend still names every topic).
const NARROW = window.matchMedia("(max-width: 700px)");
const ORIGINAL = (plot.layout.annotations || []).map(a => ({{...a}}));
let placing = false;
async function fit() {{
  if (placing) return;
  placing = true;
  try {{
    await Plotly.relayout(plot, {{showlegend: !NARROW.matches, annotations: ORIGINAL.map(a => ({{...a}}))}});
    const area = plot.querySelector(".nsewdrag").getBoundingClientRect(), top = plot.getBoundingClientRect().top;
    const ya = plot._fullLayout.yaxis, kept = [];
    const inside = (b) => b.top >= area.top && b.bottom <= area.bottom;  // a label moved below stays in the plot
    const clear = (b) => kept.every(k => b.right <= k.left || b.left >= k.right || b.bottom <= k.top || b.top >= k.bottom);
    const placed = [...plot.querySelectorAll(".annotation")].map((node, i) => {{
      const r = node.getBoundingClientRect(), a = {{...ORIGINAL[i]}};
      const above = {{left: r.left, right: r.right, top: r.top, bottom: r.bottom}};
      const low = ya.l2p(BELOW[i]) + ya._offset + top + 6;
      const below = {{left: above.left, right: above.right, top: low, bottom: low + r.height}};
      for (const [box, where] of [[above, {{}}], [below, {{y: BELOW[i], yanchor: "top", yshift: -6}}]]) {{
        if (inside(box) && clear(box)) {{ kept.push(box); return {{...a, ...where, visible: true}}; }}
      }}
      return {{...a, visible: false}};
    }});
    await Plotly.relayout(plot, {{annotations: placed}});
    plot.dataset.placed = String(placed.filter(a => a.visible).length);  // labels shown, for a reader or a test
  }} finally {{ placing = false; }}
}}
function legendList() {{
  const list = document.querySelector("#legend-list ul");
  list.replaceChildren(...plot.data.slice(0, HIGHLIGHT).map((trace, t) => {{
    const b = document.createElement("button"), swatch = document.createElement("span");
    swatch.className = "swatch"; swatch.style.background = plot._fullData[t].marker.color;
    b.append(swatch, trace.name);
    b.addEventListener("click", () => {{
      const hidden = plot.data[t].visible === "legendonly";
      Plotly.restyle(plot, {{visible: hidden ? true : "legendonly"}}, [t]);
      b.classList.toggle("hidden-topic", !hidden);
    }});
    const li = document.createElement("li"); li.append(b); return li;
  }}));
}}
legendList();
fit();
let resized = null;
window.addEventListener("resize", () => {{ clearTimeout(resized); resized = setTimeout(fit, 200); }});
function wordSearch(q) {{
  const hits = DOCS.filter(d => (d.id + " " + (d.title || "") + " " + d.text).toLowerCase().includes(q.toLowerCase()));
  ring(hits.slice(0, 200), hits.length + " matching papers highlighted" + (hits.length > 200 ? " (200 listed)" : ""));
}}
let pending = null, timer = null;
async function meaningSearch(q) {{
  if (pending) pending.abort();
  pending = new AbortController();
  try {{
    const r = await fetch(API + "?k=10&q=" + encodeURIComponent(q), {{signal: pending.signal}});
    const body = await r.json();
    if (!r.ok) {{ ring([], r.status === 422 ? "Type some words to search for." : body.error); return; }}
    const near = body.hits.filter(h => h.match !== "distant" && BY_ID.has(h.id));
    const hits = near.map(h => BY_ID.get(h.id));
    ring(hits, hits.length ? hits.length + " best matches ringed (close or related in meaning)"
                           : "No close match on this map: no paper is related to the query.",
         near.map(h => h.title || h.text.slice(0, 120)));
    const link = document.getElementById("to-search");
    if (link) link.href = "/?q=" + encodeURIComponent(q);
  }} catch (e) {{ if (e.name !== "AbortError") ring([], "search failed: " + e.message); }}
}}
const box = document.getElementById("search");
box.addEventListener("input", ev => {{
  const q = ev.target.value.trim();
  clearTimeout(timer);
  if (!q) {{ ring([], null); return; }}
  if (API) timer = setTimeout(() => meaningSearch(q), 250); else wordSearch(q);
}});
const params = new URLSearchParams(location.search);
if (params.get("focus") && BY_ID.has(params.get("focus"))) {{
  const d = BY_ID.get(params.get("focus"));
  show(d.i); ring([d], "showing " + d.id, null);
}}
if (params.get("q")) {{ box.value = params.get("q"); box.dispatchEvent(new Event("input")); }}
</script></body></html>
"""
