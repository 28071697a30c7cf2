// A list of hits: each a button (its band, its title, its id) that opens the abstract with its evidence,
// its metadata, its similar papers and its place on the topic map.
import {$, el} from "embedsearch/shared/dom.js";
import {api} from "embedsearch/page/api.js";
import {evidenceAbstract} from "embedsearch/page/evidence.js";
import {decorate} from "embedsearch/page/marks.js";
import {scoreBadge} from "embedsearch/page/scores.js";
import {describe, mathText, paperLink, preview, shown} from "embedsearch/page/text.js";

export function renderHits(list, hits, abstracts = false, append = false, order = abstracts ? "cosine" : "hybrid") {
  if (!append) list.replaceChildren();
  for (const hit of hits) {
    const detail = el("div", {className: "detail", hidden: true});
    const toggle = el("button", {className: "toggle", type: "button"}, scoreBadge(hit, abstracts, order),
      mathText("span", {className: "title"}, preview(hit)), " ",
      el("span", {className: "id", textContent: hit.id}));
    toggle.setAttribute("aria-expanded", "false");
    toggle.addEventListener("click", () => toggleDetail(hit, toggle, detail));
    const item = el("li", {className: `hit ${hit.match}`}, toggle, detail);
    list.append(item);
    decorate(hit, item);
  }
}

export function similarSection(id) {
  const list = el("ol", {className: "similar", "aria-label": "similar papers", hidden: true});
  const button = el("button", {type: "button", className: "link", textContent: "Similar papers"});
  button.setAttribute("aria-expanded", "false");
  button.addEventListener("click", async () => {
    const open = button.getAttribute("aria-expanded") !== "true";
    button.setAttribute("aria-expanded", String(open));
    button.textContent = open ? "Hide similar papers" : "Similar papers";
    list.hidden = !open;
    if (!open || list.childElementCount) return;
    list.setAttribute("aria-busy", "true");
    try {
      renderHits(list, (await api(`/similar/${encodeURIComponent(id)}?k=5&display=1`)).hits, true);
    } catch (e) { list.replaceChildren(el("li", {textContent: e.message})); }
    list.removeAttribute("aria-busy");
  });
  return [button, list];
}

async function toggleDetail(hit, toggle, detail) {
  const open = toggle.getAttribute("aria-expanded") !== "true";
  toggle.setAttribute("aria-expanded", String(open));
  detail.hidden = !open;
  if (!open || detail.childElementCount) return;
  const meta = el("p", {className: "meta", textContent: "id " + hit.id});
  const [similarButton, similarList] = similarSection(hit.id);
  const mapLink = el("a", {href: `/map?focus=${encodeURIComponent(hit.id)}`, textContent: "Show on the topic map"});
  const ranking = hit.bm25 !== null && hit.cosine !== null && hit.score !== hit.cosine
    ? ` · ranked by ${$("mode").value === "lexical" ? "BM25" : "fused"} score ${hit.score.toFixed(3)}` : "";
  detail.append(evidenceAbstract(hit, shown(hit).text), meta,
                el("div", {className: "actions"}, paperLink(hit.id, "Paper page"), similarButton, mapLink),
                similarList);
  try {
    const doc = await api(`/documents/${encodeURIComponent(hit.id)}`);
    meta.textContent = describe(doc).join(" · ") + ranking;
  } catch (e) { meta.textContent = "id " + hit.id + ranking; }
}
