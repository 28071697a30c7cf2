// Topic labels over the map, each shown from the zoom the package placed it for (topics/map_labels.py) and
// only where its whole box fits in the view; a label's tooltip is its legend line.
import {BROADER, LABELS, LEVEL, TOPICS, legendText} from "embedsearch/map/payload.js";
import {project, scale, scene, size} from "embedsearch/map/scene.js";

const layer = document.getElementById("labels");
const ONE_LEVEL = LABELS.every((l) => l.level === LEVEL);

function named(level, id) {
  const topics = level === LEVEL ? TOPICS : (BROADER.find((b) => b.level === level) || {topics: []}).topics;
  const topic = topics.find((t) => t.id === id);
  return topic ? legendText(level, topic) : "";
}

export const nodes = LABELS.map((l) => {
  const d = document.createElement("div");
  d.textContent = l.text; d.title = named(l.level, l.topic);
  d.dataset.level = l.level; d.dataset.topic = l.topic;
  Object.assign(d.style, {width: l.w + "px", height: l.h + "px", lineHeight: l.h + "px", fontSize: l.font + "px",
                          fontWeight: l.level > LEVEL || ONE_LEVEL ? "600" : "500", display: "none"});
  layer.append(d);
  return d;
});

let queued = false;
export function placeLabels() {
  queued = false;
  if (!scene.view) return;
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

export function queueLabels() { if (!queued) { queued = true; requestAnimationFrame(placeLabels); } }

// The labels shown now: their text and box in CSS px of the page.
export function shownLabels() {
  return nodes.filter((d) => d.style.display !== "none").map((d) => {
    const r = d.getBoundingClientRect();
    return {text: d.textContent, x: r.left + window.scrollX, y: r.top + window.scrollY, width: r.width, height: r.height};
  });
}
