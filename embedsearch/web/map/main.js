// The topic map: every paper drawn, labels placed by the zoom ranges the package computed, titles and ids
// inflated after the first draw. ``window.embedsearchMap`` is the one object the page shares: what tests
// (and a curious reader's console) read.
import {draw} from "embedsearch/map/draw.js";
import {ring, search} from "embedsearch/map/find.js";
import {shownLabels, queueLabels} from "embedsearch/map/labels.js";
import {fold, legend} from "embedsearch/map/legend.js";
import {show} from "embedsearch/map/panel.js";
import {DATA, lines} from "embedsearch/map/payload.js";
import {mapBox, project, scale, scene} from "embedsearch/map/scene.js";

window.embedsearchMap = {
  get ready() { return scene.ready; }, get drawn() { return scene.drawn; },
  labels: shownLabels,
  ringed() { return [...scene.plot.get("selectedPoints")]; },
  id(i) { return scene.ids[i]; },
  screen(i) {  // point i in CSS px of the page
    const [px, py] = project(scene.points.x[i], scene.points.y[i]), r = mapBox.getBoundingClientRect();
    return [r.left + window.scrollX + px, r.top + window.scrollY + py];
  },
  zoom(factor, x = null, y = null) {  // zoom in (> 1) or out, around the middle or a point (map units)
    const camera = scene.plot.get("camera"), target = camera.target;
    scene.plot.zoomToLocation([x === null ? target[0] : x, y === null ? target[1] : y], camera.distance[0] / factor);
  },
  scale, plot: () => scene.plot,
};

async function start() {
  await draw(show);
  legend();
  [scene.ids, scene.titles] = await Promise.all([lines(DATA.ids), lines(DATA.titles)]);
  if (DATA.texts) scene.texts = await lines(DATA.texts);
  scene.byId = new Map(scene.ids.map((id, i) => [id, i]));
  const box = document.getElementById("search");
  box.addEventListener("input", (ev) => search(ev.target.value.trim()));
  const params = new URLSearchParams(location.search);
  const focus = params.get("focus");
  if (focus && scene.byId.has(focus)) {
    const i = scene.byId.get(focus);
    show(i); ring([i], "showing " + focus, null);
  }
  if (params.get("q")) { box.value = params.get("q"); box.dispatchEvent(new Event("input")); }
  window.addEventListener("resize", () => { fold(); queueLabels(); });
  scene.ready = true;
}

start();
