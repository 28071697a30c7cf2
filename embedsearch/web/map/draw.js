// Every paper drawn by regl-scatterplot (WebGL, vendored), coloured by topic, with the title of the point
// under the cursor and a click that opens it.
import {createScatterplot} from "embedsearch/vendor/scatter.min.mjs";
import {placeLabels, queueLabels} from "embedsearch/map/labels.js";
import {COLOURS, DATA, N, NONE, TOPICS, inflate} from "embedsearch/map/payload.js";
import {canvas, project, scene, size} from "embedsearch/map/scene.js";

const tip = document.getElementById("tip");

// ``open(i)``: what a click on point i does.
export async function draw(open) {
  const block = new Uint16Array(await inflate(DATA.points));
  const x = new Float32Array(N), y = new Float32Array(N), z = new Float32Array(N);
  const topicOf = scene.topicOf = block.subarray(2 * N, 3 * N);
  for (let i = 0; i < N; i++) {
    x[i] = block[i] / 65534 * 2 - 1; y[i] = block[N + i] / 65534 * 2 - 1;
    z[i] = topicOf[i] === NONE ? TOPICS.length : topicOf[i];
  }
  scene.points = {x, y};
  const [w, h] = size();
  const plot = scene.plot = createScatterplot({canvas, pointSize: N > 200000 ? 2 : N > 20000 ? 3 : 6,
    opacity: N > 200000 ? 0.6 : 0.85, colorBy: "valueA", pointColor: [...COLOURS, "#b0b0b0"],
    pointColorActive: "#d62728", pointOutlineWidth: 3, pointSizeSelected: 4, cameraDistance: Math.max(1, h / w),
    lassoOnLongPress: false, backgroundColor: "#ffffff"});
  plot.subscribe("view", (ev) => { scene.view = ev.view; queueLabels(); });
  await plot.draw({x, y, valueA: z});
  scene.view = plot.get("cameraView");
  scene.drawn = N;
  placeLabels();
  plot.subscribe("select", (ev) => { if (ev.points.length === 1) open(ev.points[0]); });
  let hovered = null;  // a click on a point already ringed selects nothing new: read the point under the cursor
  canvas.addEventListener("click", () => { if (hovered !== null) open(hovered); });
  plot.subscribe("pointOver", (i) => {
    hovered = i;
    if (!scene.titles) return;
    const [px, py] = project(x[i], y[i]);
    tip.textContent = scene.titles[i]; tip.style.display = "block";
    tip.style.left = Math.min(px + 8, size()[0] - 330) + "px"; tip.style.top = (py + 8) + "px";
  });
  plot.subscribe("pointOut", () => { hovered = null; tip.style.display = "none"; });
}
