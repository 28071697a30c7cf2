// Searching as the reader types: a search a quarter second after the last key, one page at a time ("More
// results" asks for the next), the list offered as files, and a pasted abstract's own neighbours.
import {$, plural} from "embedsearch/shared/dom.js";
import {api, csvCell, post} from "embedsearch/page/api.js";
import {activeFilters, remember} from "embedsearch/page/form.js";
import {renderHits} from "embedsearch/page/hits.js";
import {listed, scoreNote, status} from "embedsearch/page/scores.js";
import {LONG_QUERY, MAX_K, state} from "embedsearch/page/state.js";

let timer = null, inflight = null;
export function schedule() { clearTimeout(timer); timer = setTimeout(() => run(false), 250); }

async function page(q, k, mode, filters, offset, signal) {
  if (q.length > LONG_QUERY) {
    return (await api("/search", {method: "POST", signal, headers: {"Content-Type": "application/json"},
                                  body: JSON.stringify({queries: [q], k, offset, mode, filters, display: true})})).results[0];
  }
  const params = new URLSearchParams({q, k, mode, display: "1"});
  if (offset) params.set("offset", offset);
  for (const f of filters) params.append("filter", f);
  return api("/search?" + params, {signal});
}

export async function run(push) {
  clearTimeout(timer);
  remember(push);
  const q = $("q").value.trim();
  state.onScreen = null;
  $("more").hidden = true;
  if (!q) { $("results").replaceChildren(); $("status").textContent = ""; return; }
  if (inflight) inflight.abort();
  inflight = new AbortController();
  const asked = Math.max(1, parseInt($("k").value, 10) || 10), k = Math.min(MAX_K, asked);
  if (asked > k) { $("k").value = String(k); state.capped = true; }  // the box says what is shown
  const mode = $("mode").value, filters = activeFilters();
  $("status").textContent = "Searching…";
  $("score-note").textContent = "";
  try {
    const body = await page(q, k, mode, filters, 0, inflight.signal);
    listed(body);
    renderHits($("results"), body.hits, false, false, mode);
    state.onScreen = {q, k, mode, filters, hits: body.hits};
    state.view = null;
    $("status").textContent = status(body) + (state.capped ? ` (at most ${MAX_K} per page)` : "");
    $("more").hidden = !body.more;
    if (body.hits.length && body.total == null) $("score-note").textContent = scoreNote(mode);
    offerExport(body.hits, q, mode);
  } catch (e) {
    if (e.name !== "AbortError") { $("results").replaceChildren(); $("status").textContent = e.message; }
  }
}

export async function moreResults() {
  if (!state.onScreen) return;
  const asked = state.onScreen, button = $("more");
  button.disabled = true;
  try {
    const body = await page(asked.q, asked.k, asked.mode, asked.filters, asked.hits.length);
    if (state.onScreen !== asked) return;  // another search replaced this one meanwhile
    listed(body);
    renderHits($("results"), body.hits, false, true, asked.mode);
    asked.hits = asked.hits.concat(body.hits);
    $("status").textContent = status({...body, hits: asked.hits});
    button.hidden = !body.more;
    offerExport(asked.hits, asked.q, asked.mode);
    $("results").children[asked.hits.length - body.hits.length]?.querySelector("button")?.focus();
  } catch (e) { $("status").textContent = e.message; }
  button.disabled = false;
}

// The shown results as files to keep (the same fields the API gives), and, for a pasted abstract, a way to
// ask for papers like it instead (as "Papers like this abstract" in the duplicate panel does).
const EXPORTED = ["rank", "id", "title", "score", "cosine", "bm25", "match"];
export function offerExport(hits, q, mode) {
  const rows = hits.map((h) => Object.fromEntries(EXPORTED.map((f) => [f, h[f] ?? ""])));
  const csv = [EXPORTED, ...rows.map((r) => EXPORTED.map((f) => r[f]))].map((r) => r.map(csvCell).join(",")).join("\r\n");
  $("export-csv").href = URL.createObjectURL(new Blob([csv + "\r\n"], {type: "text/csv"}));
  $("export-json").href = URL.createObjectURL(new Blob([JSON.stringify({query: q, mode, hits}, null, 1)],
                                                      {type: "application/json"}));
  $("result-actions").hidden = !hits.length;
  $("like-abstract").hidden = q.length < 300;
}

export async function likeAbstract() {
  const text = $("q").value.trim();
  $("status").textContent = "Searching…";
  try {
    const body = await post("/similar", {text, k: Math.min(MAX_K, parseInt($("k").value, 10) || 10), display: true});
    renderHits($("results"), body.hits, true);
    state.onScreen = null;
    $("more").hidden = true;
    $("status").textContent = `${plural(body.hits.length, "paper")} like this abstract, by closeness in meaning`;
    $("score-note").textContent = scoreNote("dense");
    offerExport(body.hits, text, "dense");
  } catch (e) { $("status").textContent = e.message; }
}
