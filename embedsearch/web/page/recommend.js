// Recommendations from the reader's marks or an imported library file (.bib, .ris, CSL-JSON, Zotero CSV), the
// list on screen exported for a reference manager, and the saved watches.
import {$, el, plural} from "embedsearch/shared/dom.js";
import {api, post, readable} from "embedsearch/page/api.js";
import {activeFilters} from "embedsearch/page/form.js";
import {renderHits} from "embedsearch/page/hits.js";
import {offerExport} from "embedsearch/page/search.js";
import {MAX_K, state} from "embedsearch/page/state.js";

export async function recommendNow(library) {
  const k = Math.min(MAX_K, parseInt($("k").value, 10) || 10);
  const body = {like: state.marks.like, unlike: state.marks.unlike, k, filters: activeFilters(), display: true,
                ...(library ? {library} : {})};
  $("status").textContent = "Recommending…";
  try {
    const found = await post("/recommend", body);
    renderHits($("results"), found.hits, true, false, "recommendation");
    state.onScreen = null;
    $("more").hidden = true;
    state.view = {kind: "recommend", body};
    const lib = found.library;
    const seeds = found.like.length + (lib ? lib.embedded.length : 0);
    $("status").textContent = `${plural(found.hits.length, "paper")} like your ${plural(seeds, "liked paper")}` +
      (found.unlike.length ? ` and unlike ${found.unlike.length}` : "") +
      (lib ? ` · library: ${lib.matched.length} matched, ${lib.embedded.length} embedded, ${lib.unmatched.length} ` +
             `unmatched, ${lib.problems.length} broken` : "");
    $("score-note").textContent = "Ordered by the recommendation's score (in each label's tooltip); the label is the band of the closest liked paper's cosine.";
    offerExport(found.hits, "", "dense");
  } catch (e) { $("status").textContent = e.message; }
  $("status").scrollIntoView({block: "start"});  // the answer is above the button (out of sight on a phone)
}

const KINDS = {bib: "bibtex", ris: "ris", json: "csl-json", csv: "zotero-csv"};
export async function importLibrary() {
  const file = $("library-file").files[0];
  if (!file) return;
  const kind = KINDS[file.name.split(".").pop().toLowerCase()];
  if (!kind) { $("status").textContent = "A library is a .bib, .ris, CSL-JSON (.json) or Zotero CSV file."; return; }
  await recommendNow({kind, text: await file.text()});
  $("library-file").value = "";
}

// The list on screen in a reference manager's format, asked of the API as the list was.
export async function exportAs(format) {
  const suffix = {bibtex: "bib", ris: "ris", "csl-json": "json"}[format];
  let response;
  if (state.view && state.view.kind === "recommend") {
    response = await fetch("/recommend", {method: "POST", headers: {"Content-Type": "application/json"},
                                          body: JSON.stringify({...state.view.body, format, display: false})});
  } else if (state.onScreen) {
    const params = new URLSearchParams({q: state.onScreen.q, k: state.onScreen.hits.length, mode: state.onScreen.mode,
                                        format});
    for (const f of state.onScreen.filters) params.append("filter", f);
    response = await fetch("/search?" + params);
  } else return;
  if (!response.ok) { $("status").textContent = readable(response.status, ""); return; }
  const link = el("a", {href: URL.createObjectURL(await response.blob()), download: `results.${suffix}`});
  document.body.append(link);
  link.click();
  link.remove();
}

export async function listWatches() {
  let found;
  try { found = await api("/watches"); } catch (e) { return; }
  if (!found.watches.length) return;
  $("watches").hidden = false;
  $("watch-list").replaceChildren(...found.watches.map((w) => el("li", {},
    el("strong", {textContent: w.name}), ": ",
    w.query || `like ${w.like.join(", ") || "—"}${w.library ? " + a library" : ""}`,
    el("span", {className: "meta", textContent: ` · last run ${w.last_run || "never"} (${plural(w.runs, "run")})`}))));
}
