// What a result's label says and what the status line says about a list: honest about what orders it.
import {el, plural} from "embedsearch/shared/dom.js";
import {state} from "embedsearch/page/state.js";

// What orders the results of each mode (the number shown), and what the band is (the same line the CLI prints).
const SCORES = {hybrid: "the fused score (meaning and words, each relative to the best candidate)",
                dense: "the cosine similarity (closeness in meaning)", lexical: "the BM25 score (how well the words match)"};
export const scoreNote = (mode) => `Ordered by ${SCORES[mode]}; close, related and distant say how close in meaning ` +
                                   "each is (cosine), whatever the order.";

// The band (a label), with the cosine it is read from only where the cosine also orders the list (dense
// searches, a paper's neighbours): a fused score, a BM25 or a recommendation's score beside a band word would
// contradict it, so those live in the tooltip under their names. ``abstracts``: neighbours of a paper or of a
// text, whose cosines run higher than a query's; ``order``: what orders the list.
const ORDERS = {cosine: "cosine", hybrid: "fused score", lexical: "BM25 score", dense: "cosine",
                recommendation: "recommendation score"};
export function scoreBadge(hit, abstracts, order) {
  if (hit.listed) {  // a listing (no free words) is in date order: the date is what orders it
    const when = hit.metadata?.date ?? hit.metadata?.year ?? "undated";
    return el("span", {className: "score listed", textContent: String(when), title: "listed by date, newest first"});
  }
  const cosine = hit.cosine === null || hit.cosine === undefined ? 0 : hit.cosine;
  const named = ORDERS[order] || "score", byCosine = named === "cosine", bands = state.bands;
  const [related, close] = abstracts ? [bands.similar_related, bands.similar_close] : [bands.related, bands.close];
  return el("span", {className: `score ${hit.match}`,
    textContent: byCosine ? `${hit.match} ${cosine.toFixed(2)}` : hit.match,
    title: (byCosine ? "" : `${named} ${hit.score.toFixed(3)} orders the list; `) +
           `cosine ${cosine.toFixed(3)}${byCosine ? " orders the list and gives the band" : ""}: how close in ` +
           `meaning, comparable across ${abstracts ? "papers" : "queries and modes"}. close from ${close}, ` +
           `related from ${related}, below that distant.`});
}

// A listing (a query of terms only) is every match in date order: its hits carry dates, not scores.
export function listed(body) {
  if (body.total != null) for (const hit of body.hits) hit.listed = true;
}

export function status(body) {
  if (body.total != null) {
    return `${plural(body.total, "paper")} match every term (exact over the whole index), newest first; ` +
           `${body.hits.length} shown`;
  }
  if (!body.hits.length) return "No results: no abstract uses these words. Try the meaning or hybrid mode.";
  if (body.match === "none") {
    const best = Math.max(...body.hits.map((h) => h.cosine || 0));
    return `No close match: none of these ${plural(body.hits.length, "paper")} is about your query ` +
           `(best cosine ${best.toFixed(2)}, related starts at ${state.bands.related}).`;
  }
  return plural(body.hits.length, "result");
}
