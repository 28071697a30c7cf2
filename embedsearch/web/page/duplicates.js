// The duplicate check of one pasted abstract: each flagged pair with its verdict in words and both texts side
// by side, the shared passages marked; or, when nothing is flagged, the nearest papers.
import {$, el, plural} from "embedsearch/shared/dom.js";
import {post} from "embedsearch/page/api.js";
import {renderHits} from "embedsearch/page/hits.js";
import {paperLink} from "embedsearch/page/text.js";

function passagePattern(passage) {
  const words = passage.match(/[\p{L}\p{N}_]+/gu) || [];
  return words.length ? words.map((w) => w.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")).join("[\\W_]+") : null;
}

function highlighted(text, passages) {
  const patterns = passages.map(passagePattern).filter(Boolean);
  const out = el("p", {className: "quoted"});
  if (!patterns.length) { out.textContent = text; return out; }
  const re = new RegExp(patterns.join("|"), "giu");
  let last = 0;
  for (const m of text.matchAll(re)) {
    out.append(text.slice(last, m.index), el("mark", {textContent: m[0]}));
    last = m.index + m[0].length;
  }
  out.append(text.slice(last));
  return out;
}

const VERDICTS = {exact: "the same text", "near-identical": "nearly the same text", reworded: "nearly the same meaning"};

// A flagged pair: the matched paper by its title, what the verdict means with the wording figure as a
// sentence, and both texts side by side with the shared passages marked.
export function pairView(pair, ownLabel) {
  const display = pair.display || {a: "", b: "", passages: pair.passages};
  const title = display.b_title || pair.b;
  return el("div", {className: "match"},
    el("p", {}, el("span", {className: `verdict ${pair.verdict}`, textContent: pair.verdict}),
       `: ${VERDICTS[pair.verdict] || "flagged"}, ${(100 * pair.overlap).toFixed(0)}% of the wording in common ` +
       `(cosine ${pair.cosine.toFixed(3)}) with `, paperLink(pair.b, title)),
    el("div", {className: "side-by-side"},
       el("div", {}, el("h3", {textContent: ownLabel}), highlighted(display.a, display.passages)),
       el("div", {}, el("h3", {}, "Indexed: ", paperLink(pair.b, title)), highlighted(display.b, display.passages))));
}

// The pair seen from its other paper.
export function flip(pair) {
  const d = pair.display;
  return {...pair, a: pair.b, b: pair.a,
          display: d && {a: d.b, b: d.a, a_title: d.b_title, b_title: d.a_title, passages: d.passages}};
}

// A new check replaces the answer of the one before, single or batch.
export function clearAnswers() {
  for (const id of ["dup-results", "batch-results"]) $(id).replaceChildren();
  for (const id of ["dup-status", "batch-status"]) $(id).textContent = "";
  $("batch-download").hidden = true;
}

export async function checkDuplicates(event) {
  event.preventDefault();
  const text = $("dup-text").value;
  const box = $("dup-results");
  clearAnswers();
  if (!text.trim()) { $("dup-status").textContent = "Paste an abstract first."; return; }
  $("dup-status").textContent = "Checking…";
  try {
    const report = await post("/duplicates/check", {text, display: true});
    const pairs = report.groups.flatMap((g) => g.pairs);
    if (pairs.length) {
      $("dup-status").textContent = `Flagged: ${plural(pairs.length, "match")} in the index`;
      for (const pair of pairs) box.append(pairView(pair, "Your abstract"));
      return;
    }
    const near = await post("/similar", {text, k: 3, display: true});
    $("dup-status").textContent = "No duplicates found in the index. The nearest papers:";
    const list = el("ol", {className: "similar", "aria-label": "nearest papers"});
    renderHits(list, near.hits, true);
    box.append(list);
  } catch (e) { $("dup-status").textContent = e.message; }
}

export async function similarToAbstract() {
  const text = $("dup-text").value;
  clearAnswers();
  if (!text.trim()) { $("dup-status").textContent = "Paste an abstract first."; return; }
  $("dup-status").textContent = "Searching…";
  try {
    const body = await post("/similar", {text, k: 10, display: true});
    const list = el("ol", {className: "similar", "aria-label": "papers like this abstract"});
    renderHits(list, body.hits, true);
    $("dup-results").append(list);
    $("dup-status").textContent = body.match === "none" ? "No close match in the index. The nearest papers:"
      : `${plural(body.hits.length, "paper")} like this abstract`;
  } catch (e) { $("dup-status").textContent = e.message; }
}
