// A page per paper (/paper/ID, a link to share): the paper, its similar papers, its near-duplicates in the
// index and, where the server was started with --reviewers, who could review it.
import {$, el} from "embedsearch/shared/dom.js";
import {api} from "embedsearch/page/api.js";
import {flip, pairView} from "embedsearch/page/duplicates.js";
import {similarSection} from "embedsearch/page/hits.js";
import {describe, mathText, preview} from "embedsearch/page/text.js";

export async function showPaper(id) {
  document.body.classList.add("paper-view");
  const box = $("paper");
  box.hidden = false;
  box.replaceChildren(el("p", {textContent: "Loading…"}));
  try {
    const doc = await api(`/documents/${encodeURIComponent(id)}?display=1`);
    const heading = preview(doc);
    document.title = `${heading} · embedsearch`;
    const [similarButton, similarList] = similarSection(id);
    const dups = el("div", {className: "paper-duplicates"}, el("p", {textContent: "Looking for near-duplicates…"}));
    box.replaceChildren(
      el("p", {}, el("a", {href: "/", textContent: "← Search"})),
      mathText("h2", {}, heading),
      el("p", {className: "meta", textContent: describe(doc).join(" · ")}),
      mathText("p", {className: "abstract"}, doc.display.text),
      el("div", {className: "actions"}, similarButton,
         el("a", {href: `/map?focus=${encodeURIComponent(id)}`, textContent: "Show on the topic map"})),
      similarList, el("h3", {textContent: "Near-duplicates in the index"}), dups);
    similarButton.click();
    reviewersSection(id, box);
    try {
      const report = await api(`/duplicates/of/${encodeURIComponent(id)}?display=1`);
      const pairs = report.groups.flatMap((g) => g.pairs).map((p) => p.a === id ? p : flip(p));
      dups.replaceChildren(...(pairs.length ? pairs.map((p) => pairView(p, "This paper"))
                                            : [el("p", {textContent: "None: no other abstract here is the same work reworded."})]));
    } catch (e) { dups.replaceChildren(el("p", {textContent: e.message})); }  // the paper stays shown
  } catch (e) { box.replaceChildren(el("p", {}, e.message, " ", el("a", {href: "/", textContent: "Back to search"}))); }
}

async function reviewersSection(id, box) {
  let info;
  try { info = await api("/info"); } catch (e) { return; }
  if (!info.reviewers) return;
  const list = el("ol", {className: "reviewers", "aria-label": "who could review it"});
  box.append(el("h3", {textContent: "Who could review it"}), list);
  try {
    const found = await api(`/reviewers/for/${encodeURIComponent(id)}?k=5`);
    list.replaceChildren(...found.reviewers.map((r) => el("li", {},
      el("strong", {textContent: r.reviewer}), ` affinity ${r.score.toFixed(2)}`,
      r.conflict ? el("span", {className: "conflict", textContent: ` · conflict: ${r.conflict}`}) : "",
      el("ul", {className: "evidence"}, ...r.evidence.map((p) => el("li", {
        textContent: `${p.title || p.id} (cosine ${p.similarity.toFixed(2)})`}))))));
  } catch (e) { list.replaceChildren(el("li", {textContent: e.message})); }
}
