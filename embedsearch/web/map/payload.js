// What the page carries (topics/map_payload.py): every paper's place and topic, the labels with the zoom
// each shows from, and ids, titles and (standalone, small maps) abstracts, gzipped and base64-coded; and the
// page's settings: the search API (served) and the count line.
export const DATA = JSON.parse(document.getElementById("map-data").textContent);
export const CONFIG = JSON.parse(document.getElementById("map-config").textContent);
export const N = DATA.n, TOPICS = DATA.topics, LABELS = DATA.labels;
export const LEVEL = DATA.level || 0, BROADER = DATA.broader || [];
export const NONE = 65535;  // the topic of an unassigned paper

function bytes(b64) {
  const s = atob(b64), out = new Uint8Array(s.length);
  for (let i = 0; i < s.length; i++) out[i] = s.charCodeAt(i);
  return out;
}

export async function inflate(b64) {
  const stream = new Blob([bytes(b64)]).stream().pipeThrough(new DecompressionStream("gzip"));
  return new Response(stream).arrayBuffer();
}

export async function lines(b64) { return new TextDecoder().decode(await inflate(b64)).split("\n"); }

function colours(n) {
  const base = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#bcbd22", "#17becf",
                "#393b79", "#637939", "#8c6d31", "#843c39", "#7b4173", "#3182bd", "#e6550d", "#31a354", "#756bb1"];
  const out = [];
  for (let i = 0; i < n; i++) out.push(i < base.length ? base[i] : `hsl(${(i * 137.5) % 360},55%,${40 + (i % 3) * 8}%)`);
  return out;
}
export const COLOURS = colours(TOPICS.length);

// A topic as the legend lists it (and a label's tooltip says it).
export function legendText(level, topic) {
  return `${BROADER.length ? `level ${level} · ` : ""}${topic.id}: ${topic.name} (${topic.size})`;
}
