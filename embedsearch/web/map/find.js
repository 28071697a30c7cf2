// Finding papers on the map: standalone, a word search over what the page carries; served, a search by
// meaning through the API. Hits are ringed and listed; a click on one opens it and rings it alone.
import {CONFIG, N} from "embedsearch/map/payload.js";
import {show} from "embedsearch/map/panel.js";
import {scene} from "embedsearch/map/scene.js";

export function ring(hits, note, names) {
  scene.plot.select(hits, {preventEvent: true});
  const count = document.getElementById("count");
  count.textContent = note === null ? CONFIG.counted : note;
  count.dataset.matches = hits.length;
  const listed = hits.length > 1 || names ? hits.slice(0, 200) : [];
  document.getElementById("found").replaceChildren(...listed.map((i, n) => {
    const b = document.createElement("button");
    b.textContent = (names && names[n]) || scene.titles[i] || scene.ids[i];
    b.addEventListener("click", () => { show(i); scene.plot.select([i], {preventEvent: true}); });
    const li = document.createElement("li"); li.append(b); return li;
  }));
}

function wordSearch(q) {
  const words = q.toLowerCase(), hits = [];
  for (let i = 0; i < N; i++) {
    const hay = scene.ids[i] + " " + scene.titles[i] + " " + (scene.texts ? scene.texts[i] : "");
    if (hay.toLowerCase().includes(words)) hits.push(i);
  }
  ring(hits, hits.length + " matching papers ringed" + (hits.length > 200 ? " (200 listed)" : ""));
}

let pending = null;
async function meaningSearch(q) {
  if (pending) pending.abort();
  pending = new AbortController();
  try {
    const r = await fetch(CONFIG.api + "?k=10&q=" + encodeURIComponent(q), {signal: pending.signal});
    const body = await r.json();
    if (!r.ok) { ring([], r.status === 422 ? "Type some words to search for." : body.error); return; }
    const near = body.hits.filter((h) => h.match !== "distant" && scene.byId.has(h.id));
    const hits = near.map((h) => scene.byId.get(h.id));
    ring(hits, hits.length ? hits.length + " best matches ringed (close or related in meaning)"
                           : "No close match on this map: no paper is related to the query.",
         near.map((h) => h.title || h.text.slice(0, 120)));
    const link = document.getElementById("to-search");
    if (link) link.href = "/?q=" + encodeURIComponent(q);
  } catch (e) { if (e.name !== "AbortError") ring([], "search failed: " + e.message); }
}

let timer = null;
export function search(q) {
  clearTimeout(timer);
  if (!q) { ring([], null); return; }
  if (CONFIG.api) timer = setTimeout(() => meaningSearch(q), 250); else wordSearch(q);
}
