// The topic map: every paper drawn by regl-scatterplot (WebGL), labels placed by the zoom ranges the
// package computed (topics/map_labels.py), titles and ids inflated after the first draw.
"use strict";
const DATA = JSON.parse(document.getElementById("map-data").textContent);
const N = DATA.n, TOPICS = DATA.topics, LABELS = DATA.labels;
const NONE = 65535;
const state = {ids: null, titles: null, texts: null, byId: null, drawn: 0, ready: false, hidden: new Set()};

function bytes(b64) {
  const s = atob(b64), out = new Uint8Array(s.length);
  for (let i = 0; i < s.length; i++) out[i] = s.charCodeAt(i);
  return out;
}
async function inflate(b64) {
  const stream = new Blob([bytes(b64)]).stream().pipeThrough(new DecompressionStream("gzip"));
  return new Response(stream).arrayBuffer();
}
async function lines(b64) { return new TextDecoder().decode(await inflate(b64)).split("\n"); }

function colours(n) {
  const base = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#bcbd22", "#17becf",
                "#393b79", "#637939", "#8c6d31", "#843c39", "#7b4173", "#3182bd", "#e6550d", "#31a354", "#756bb1"];
  const out = [];
  for (let i = 0; i < n; i++) out.push(i < base.length ? base[i] : `hsl(${(i * 137.5) % 360},55%,${40 + (i % 3) * 8}%)`);
  return out;
}
const COLOURS = colours(TOPICS.length);

const mapBox = document.getElementById("map"), canvas = document.getElementById("canvas");
const layer = document.getElementById("labels"), tip = document.getElementById("tip");
let plot = null, points = null, topicOf = null, view = null;

function size() { const r = mapBox.getBoundingClientRect(); return [Math.max(r.width, 1), Math.max(r.height, 1)]; }

// Map units -> CSS px inside the map, from the camera's view matrix (regl-scatterplot: clip x is divided
// by the width/height ratio, y is not; the scale is the same on both axes).
function project(x, y) {
  const [w, h] = size(), v = view;
  const cx = (v[0] * x + v[12]) * h / w, cy = v[5] * y + v[13];
  return [w * (cx + 1) / 2, h * (1 - cy) / 2];
}
function scale() { return size()[1] / 2 * view[5]; }

const LEVEL = DATA.level || 0, BROADER = DATA.broader || [];
const ONE_LEVEL = LABELS.every(l => l.level === LEVEL);
function named(level, id) {  // a label's topic as the legend lists it
  const topics = level === LEVEL ? TOPICS : (BROADER.find(b => b.level === level) || {topics: []}).topics;
  const topic = topics.find(t => t.id === id);
  return topic ? legendText(level, topic) : "";
}
function legendText(level, topic) {
  return `${BROADER.length ? `level ${level} · ` : ""}${topic.id}: ${topic.name} (${topic.size})`;
}
const nodes = LABELS.map(l => {
  const d = document.createElement("div");
  d.textContent = l.text; d.title = named(l.level, l.topic);
  d.dataset.level = l.level; d.dataset.topic = l.topic;
  Object.assign(d.style, {width: l.w + "px", height: l.h + "px", lineHeight: l.h + "px", fontSize: l.font + "px",
                          fontWeight: l.level > LEVEL || ONE_LEVEL ? "600" : "500", display: "none"});
  layer.append(d);
  return d;
});
let queued = false;
function placeLabels() {
  queued = false;
  if (!view) return;
  const s = scale(), [w, h] = size();
  LABELS.forEach((l, i) => {
    let show = l.scale !== null && l.scale <= s;
    if (show) {
      const [x, y] = project(l.x, l.y), left = x - l.w / 2, top = y - l.h / 2;
      show = left >= 0 && top >= 0 && left + l.w <= w && top + l.h <= h;
      if (show) { nodes[i].style.left = left + "px"; nodes[i].style.top = top + "px"; }
    }
    nodes[i].style.display = show ? "block" : "none";
  });
}
function queueLabels() { if (!queued) { queued = true; requestAnimationFrame(placeLabels); } }

async function draw() {
  const block = new Uint16Array(await inflate(DATA.points));
  const x = new Float32Array(N), y = new Float32Array(N), z = new Float32Array(N);
  topicOf = block.subarray(2 * N, 3 * N);
  for (let i = 0; i < N; i++) {
    x[i] = block[i] / 65534 * 2 - 1; y[i] = block[N + i] / 65534 * 2 - 1;
    z[i] = topicOf[i] === NONE ? TOPICS.length : topicOf[i];
  }
  points = {x, y};
  const [w, h] = size();
  plot = createScatterplot({canvas, pointSize: N > 200000 ? 2 : N > 20000 ? 3 : 6, opacity: N > 200000 ? 0.6 : 0.85,
    colorBy: "valueA", pointColor: [...COLOURS, "#b0b0b0"], pointColorActive: "#d62728", pointOutlineWidth: 3,
    pointSizeSelected: 4, cameraDistance: Math.max(1, h / w), lassoOnLongPress: false, backgroundColor: "#ffffff"});
  plot.subscribe("view", ev => { view = ev.view; queueLabels(); });
  await plot.draw({x, y, valueA: z});
  view = plot.get("cameraView");
  state.drawn = N;
  placeLabels();
  plot.subscribe("select", ev => { if (ev.points.length === 1) show(ev.points[0]); });
  let hovered = null;  // a click on a point already ringed selects nothing new: read the point under the cursor
  canvas.addEventListener("click", () => { if (hovered !== null) show(hovered); });
  plot.subscribe("pointOver", i => {
    hovered = i;
    if (!state.titles) return;
    const [px, py] = project(x[i], y[i]);
    tip.textContent = state.titles[i]; tip.style.display = "block";
    tip.style.left = Math.min(px + 8, size()[0] - 330) + "px"; tip.style.top = (py + 8) + "px";
  });
  plot.subscribe("pointOut", () => { hovered = null; tip.style.display = "none"; });
}

// $...$ and $$...$$ typeset by KaTeX where the page has it (served: as the search page does), else left as written.
const MATH = /(?<!\\)\$\$(?=\S)([\s\S]+?)(?<=\S)\$\$|(?<![\\$])\$(?=[^\s$])([^$\n]*?[^\s$\\])\$(?!\$)/g;
function typeset(node, text) {
  node.textContent = "";
  if (!window.katex) { node.textContent = text; return; }
  let last = 0;
  for (const m of text.matchAll(MATH)) {
    const span = document.createElement("span");
    try { katex.render(m[1] ?? m[2], span, {displayMode: m[1] !== undefined, throwOnError: false}); }
    catch (e) { span.textContent = m[0]; }
    node.append(text.slice(last, m.index), span);
    last = m.index + m[0].length;
  }
  node.append(text.slice(last));
}

function topicName(i) { const t = topicOf[i]; return t === NONE ? "unassigned" : TOPICS[t].name; }
function show(i) {
  const box = document.getElementById("paper");
  box.innerHTML = "";
  const h = document.createElement("h3"); typeset(h, state.titles ? state.titles[i] : "");
  const t = document.createElement("div"); t.className = "topic";
  t.textContent = (state.ids ? state.ids[i] : "") + " · " + topicName(i);
  const p = document.createElement("p"); typeset(p, state.texts ? state.texts[i] : "Loading…");
  box.append(h, t, p);
  if (window.matchMedia("(max-width: 700px)").matches) box.scrollIntoView({block: "start"});
  if (!state.texts && API) {  // served: the abstract comes from the API when asked for, not inside the page
    fetch("/documents/" + encodeURIComponent(state.ids[i]) + "?display=true").then(r => r.json())
      .then(doc => typeset(p, doc.display ? doc.display.text : doc.error))
      .catch(() => { p.textContent = "The abstract could not be loaded."; });
    const a = document.createElement("a"); a.href = "/paper/" + encodeURIComponent(state.ids[i]);
    a.textContent = "Open the paper's page"; box.append(a);
  } else if (!state.texts) {
    p.textContent = "This map carries titles only (it has more than 20,000 papers); `embedsearch serve` shows abstracts.";
  }
}

// Ring ``hits`` (point numbers) on the map and list them (a click on one reads it and rings it alone).
function ring(hits, note, names) {
  plot.select(hits, {preventEvent: true});
  const count = document.getElementById("count");
  count.textContent = note === null ? COUNTED : note;
  count.dataset.matches = hits.length;
  const listed = hits.length > 1 || names ? hits.slice(0, 200) : [];
  document.getElementById("found").replaceChildren(...listed.map((i, n) => {
    const b = document.createElement("button");
    b.textContent = (names && names[n]) || state.titles[i] || state.ids[i];
    b.addEventListener("click", () => { show(i); plot.select([i], {preventEvent: true}); });
    const li = document.createElement("li"); li.append(b); return li;
  }));
}

function fold() {  // on a phone the legend folds away: the map keeps the screen
  document.getElementById("legend-list").open = !window.matchMedia("(max-width: 700px)").matches;
}
function legend() {
  fold();
  const broader = BROADER.flatMap(b => [
    Object.assign(document.createElement("li"), {className: "level", textContent: `Broader topics, level ${b.level}`}),
    ...b.topics.map(topic => Object.assign(document.createElement("li"), {textContent: legendText(b.level, topic)}))]);
  document.querySelector("#legend-list ul").replaceChildren(...TOPICS.map((topic, t) => {
    const b = document.createElement("button"), swatch = document.createElement("span");
    swatch.className = "swatch"; swatch.style.background = COLOURS[t];
    b.append(swatch, legendText(LEVEL, topic)); b.title = topic.label;
    b.addEventListener("click", () => {
      state.hidden.has(t) ? state.hidden.delete(t) : state.hidden.add(t);
      b.classList.toggle("hidden-topic", state.hidden.has(t));
      if (!state.hidden.size) { plot.unfilter({preventEvent: true}); return; }
      const kept = [];
      for (let i = 0; i < N; i++) if (!state.hidden.has(topicOf[i])) kept.push(i);
      plot.filter(kept, {preventEvent: true});
    });
    const li = document.createElement("li"); li.append(b); return li;
  }), ...broader);
}

function wordSearch(q) {
  const words = q.toLowerCase(), hits = [];
  for (let i = 0; i < N; i++) {
    const hay = state.ids[i] + " " + state.titles[i] + " " + (state.texts ? state.texts[i] : "");
    if (hay.toLowerCase().includes(words)) hits.push(i);
  }
  ring(hits, hits.length + " matching papers ringed" + (hits.length > 200 ? " (200 listed)" : ""));
}
let pending = null, timer = null;
async function meaningSearch(q) {
  if (pending) pending.abort();
  pending = new AbortController();
  try {
    const r = await fetch(API + "?k=10&q=" + encodeURIComponent(q), {signal: pending.signal});
    const body = await r.json();
    if (!r.ok) { ring([], r.status === 422 ? "Type some words to search for." : body.error); return; }
    const near = body.hits.filter(h => h.match !== "distant" && state.byId.has(h.id));
    const hits = near.map(h => state.byId.get(h.id));
    ring(hits, hits.length ? hits.length + " best matches ringed (close or related in meaning)"
                           : "No close match on this map: no paper is related to the query.",
         near.map(h => h.title || h.text.slice(0, 120)));
    const link = document.getElementById("to-search");
    if (link) link.href = "/?q=" + encodeURIComponent(q);
  } catch (e) { if (e.name !== "AbortError") ring([], "search failed: " + e.message); }
}

window.embedsearchMap = {
  get ready() { return state.ready; }, get drawn() { return state.drawn; },
  labels() {  // the labels shown now: their text and box in CSS px of the page
    return nodes.filter(d => d.style.display !== "none").map(d => {
      const r = d.getBoundingClientRect();
      return {text: d.textContent, x: r.left + window.scrollX, y: r.top + window.scrollY, width: r.width, height: r.height};
    });
  },
  ringed() { return [...plot.get("selectedPoints")]; },
  id(i) { return state.ids[i]; },
  screen(i) {  // point i in CSS px of the page
    const [px, py] = project(points.x[i], points.y[i]), r = mapBox.getBoundingClientRect();
    return [r.left + window.scrollX + px, r.top + window.scrollY + py];
  },
  zoom(factor, x = null, y = null) {  // zoom in (> 1) or out, around the middle or a point (map units)
    const camera = plot.get("camera"), target = camera.target;
    plot.zoomToLocation([x === null ? target[0] : x, y === null ? target[1] : y], camera.distance[0] / factor);
  },
  scale, plot: () => plot,
};

(async () => {
  await draw();
  legend();
  [state.ids, state.titles] = await Promise.all([lines(DATA.ids), lines(DATA.titles)]);
  if (DATA.texts) state.texts = await lines(DATA.texts);
  state.byId = new Map(state.ids.map((id, i) => [id, i]));
  const box = document.getElementById("search");
  box.addEventListener("input", ev => {
    const q = ev.target.value.trim();
    clearTimeout(timer);
    if (!q) { ring([], null); return; }
    if (API) timer = setTimeout(() => meaningSearch(q), 250); else wordSearch(q);
  });
  const params = new URLSearchParams(location.search);
  if (params.get("focus") && state.byId.has(params.get("focus"))) {
    const i = state.byId.get(params.get("focus"));
    show(i); ring([i], "showing " + params.get("focus"), null);
  }
  if (params.get("q")) { box.value = params.get("q"); box.dispatchEvent(new Event("input")); }
  window.addEventListener("resize", () => { fold(); queueLabels(); });
  state.ready = true;
})();
