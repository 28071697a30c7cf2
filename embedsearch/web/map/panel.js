// The paper panel: a clicked paper's title, id, topic and abstract. Served, the abstract comes from the API
// and its math is typeset by the vendored KaTeX; standalone, the page carries the text (math as read text).
import {CONFIG, NONE, TOPICS} from "embedsearch/map/payload.js";
import {scene} from "embedsearch/map/scene.js";
import {typeset} from "embedsearch/shared/math.js";

const katex = CONFIG.api ? import("embedsearch/vendor/katex/katex.min.mjs").then((m) => m.default) : Promise.resolve(null);

function topicName(i) { const t = scene.topicOf[i]; return t === NONE ? "unassigned" : TOPICS[t].name; }

export async function show(i) {
  const math = await katex;
  const box = document.getElementById("paper");
  box.innerHTML = "";
  const h = typeset(document.createElement("h3"), scene.titles ? scene.titles[i] : "", math);
  const t = document.createElement("div"); t.className = "topic";
  t.textContent = (scene.ids ? scene.ids[i] : "") + " · " + topicName(i);
  const p = typeset(document.createElement("p"), scene.texts ? scene.texts[i] : "Loading…", math);
  box.append(h, t, p);
  if (window.matchMedia("(max-width: 700px)").matches) box.scrollIntoView({block: "start"});
  if (!scene.texts && CONFIG.api) {  // served: the abstract comes from the API when asked for, not inside the page
    fetch("/documents/" + encodeURIComponent(scene.ids[i]) + "?display=true").then((r) => r.json())
      .then((doc) => typeset(p, doc.display ? doc.display.text : doc.error, math))
      .catch(() => { p.textContent = "The abstract could not be loaded."; });
    const a = document.createElement("a"); a.href = "/paper/" + encodeURIComponent(scene.ids[i]);
    a.textContent = "Open the paper's page"; box.append(a);
  } else if (!scene.texts) {
    p.textContent = "This map carries titles only (it has more than 20,000 papers); `embedsearch serve` shows abstracts.";
  }
}
