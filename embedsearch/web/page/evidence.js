// Why a hit matched, shown on it: its matching words marked, and in its abstract the sentence closest in
// meaning to the query underlined.
import {el} from "embedsearch/shared/dom.js";
import {mathText} from "embedsearch/page/text.js";

const escaped = (w) => w.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
function wordPattern(hit) {
  const words = ((hit.evidence && hit.evidence.words) || []).map((w) => w.word).filter(Boolean);
  return words.length ? new RegExp(`\\b(${words.map(escaped).join("|")})\\w*`, "giu") : null;
}

// Every text node below ``node`` (math left alone) with the hit's matching words in <mark>.
export function markWords(node, hit) {
  const pattern = wordPattern(hit);
  if (!pattern) return;
  const walker = document.createTreeWalker(node, NodeFilter.SHOW_TEXT, {acceptNode: (t) =>
    t.parentElement.closest(".math") ? NodeFilter.FILTER_REJECT : NodeFilter.FILTER_ACCEPT});
  const texts = [];
  while (walker.nextNode()) texts.push(walker.currentNode);
  for (const text of texts) {
    const parts = [];
    let last = 0;
    for (const m of text.data.matchAll(pattern)) {
      parts.push(text.data.slice(last, m.index), el("mark", {className: "word", textContent: m[0]}));
      last = m.index + m[0].length;
    }
    if (!parts.length) continue;
    parts.push(text.data.slice(last));
    text.replaceWith(...parts);
  }
}

// Sentences as the server splits them: a stop, space, then a capital, digit, bracket or math.
const BREAK = /(?<=[.!?])\s+(?=[A-Z0-9(\[$\\])/g;
function sentenceSpans(text) {
  const spans = [];
  let start = 0;
  for (const m of text.matchAll(BREAK)) { spans.push([start, m.index]); start = m.index + m[0].length; }
  spans.push([start, text.length]);
  return spans;
}

// The abstract with the closest sentence underlined and the matching words marked.
export function evidenceAbstract(hit, text) {
  const box = el("p", {className: "abstract"});
  const chosen = hit.evidence && hit.evidence.sentence;
  const which = chosen ? sentenceSpans(hit.text).findIndex(([a]) => a >= chosen[0]) : -1;
  sentenceSpans(text).forEach(([a, b], n) => {
    const part = mathText("span", {className: n === which ? "evidence-sentence" : ""}, text.slice(a, b));
    if (n === which) part.title = "the sentence closest in meaning to your query";
    box.append(part, " ");
  });
  markWords(box, hit);
  return box;
}
