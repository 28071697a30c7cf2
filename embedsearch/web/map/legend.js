// The legend: every topic of the coloured level with its swatch (a click hides or shows its papers), then
// the broader levels' topics the labels may name. On a phone it folds away so the map keeps the screen.
import {BROADER, COLOURS, LEVEL, N, TOPICS, legendText} from "embedsearch/map/payload.js";
import {scene} from "embedsearch/map/scene.js";

export function fold() {
  document.getElementById("legend-list").open = !window.matchMedia("(max-width: 700px)").matches;
}

function toggle(t, button) {
  const hidden = scene.hidden;
  hidden.has(t) ? hidden.delete(t) : hidden.add(t);
  button.classList.toggle("hidden-topic", hidden.has(t));
  if (!hidden.size) { scene.plot.unfilter({preventEvent: true}); return; }
  const kept = [];
  for (let i = 0; i < N; i++) if (!hidden.has(scene.topicOf[i])) kept.push(i);
  scene.plot.filter(kept, {preventEvent: true});
}

export function legend() {
  fold();
  const broader = BROADER.flatMap((b) => [
    Object.assign(document.createElement("li"), {className: "level", textContent: `Broader topics, level ${b.level}`}),
    ...b.topics.map((topic) => Object.assign(document.createElement("li"), {textContent: legendText(b.level, topic)}))]);
  document.querySelector("#legend-list ul").replaceChildren(...TOPICS.map((topic, t) => {
    const b = document.createElement("button"), swatch = document.createElement("span");
    swatch.className = "swatch"; swatch.style.background = COLOURS[t];
    b.append(swatch, legendText(LEVEL, topic)); b.title = topic.label;
    b.addEventListener("click", () => toggle(t, b));
    const li = document.createElement("li"); li.append(b); return li;
  }), ...broader);
}
