"use strict";
// The researcher's desk on the search page (after app.js, whose helpers it uses): mark results as liked or
// not for me (kept in the URL as like=ID and unlike=ID, so a set is shareable), recommend from them or from
// an imported library file (.bib, .ris, CSL-JSON, Zotero CSV), export the list for a reference manager,
// each hit's evidence (its matching words marked, its closest sentence underlined), and the saved watches.
const desk = {like: [], unlike: [], view: null};  // view: what is on screen, so an export asks for the same

function deskFromUrl() {
  const params = new URLSearchParams(location.search);
  desk.like = params.getAll("like");
  desk.unlike = params.getAll("unlike").filter((id) => !desk.like.includes(id));
}

function deskToUrl() {
  const params = new URLSearchParams(location.search);
  params.delete("like"); params.delete("unlike");
  for (const id of desk.like) params.append("like", id);
  for (const id of desk.unlike) params.append("unlike", id);
  const query = params.toString();
  history.replaceState({}, "", location.pathname + (query ? "?" + query : ""));
}

function deskCount() {
  const n = desk.like.length, m = desk.unlike.length;
  $("recommend").hidden = n === 0;
  $("recommend").textContent = `Recommend from these (${n} liked${m ? `, ${m} not for me` : ""})`;
  $("clear-marks").hidden = n + m === 0;
}

function mark(id, set, button, other) {
  const list = desk[set], away = desk[set === "like" ? "unlike" : "like"];
  const at = list.indexOf(id);
  if (at >= 0) list.splice(at, 1); else { list.push(id); if (away.includes(id)) away.splice(away.indexOf(id), 1); }
  button.setAttribute("aria-pressed", String(list.includes(id)));
  other.setAttribute("aria-pressed", "false");
  deskToUrl();
  deskCount();
}

// Called by renderHits for every hit: the two marks, the seeds a recommendation is closest to, and the
// hit's matching words marked in its title.
function decorate(hit, item) {
  const like = el("button", {type: "button", className: "mark like", textContent: "Like"});
  const unlike = el("button", {type: "button", className: "mark unlike", textContent: "Not for me"});
  like.setAttribute("aria-pressed", String(desk.like.includes(hit.id)));
  unlike.setAttribute("aria-pressed", String(desk.unlike.includes(hit.id)));
  like.setAttribute("aria-label", `Like ${hit.id}`); unlike.setAttribute("aria-label", `Not for me: ${hit.id}`);
  like.addEventListener("click", () => mark(hit.id, "like", like, unlike));
  unlike.addEventListener("click", () => mark(hit.id, "unlike", unlike, like));
  item.querySelector("button.toggle").after(el("span", {className: "marks"}, like, unlike));
  const seeds = hit.evidence && hit.evidence.closest_seeds;
  if (seeds) item.append(el("p", {className: "closest", textContent: "closest to " +
    seeds.map((s) => `${s.seed} (${s.cosine.toFixed(2)})`).join(", ")}));
  const title = item.querySelector(".title");
  if (title) markWords(title, hit);
}

const escaped = (w) => w.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
function wordPattern(hit) {
  const words = ((hit.evidence && hit.evidence.words) || []).map((w) => w.word).filter(Boolean);
  return words.length ? new RegExp(`\\b(${words.map(escaped).join("|")})\\w*`, "giu") : null;
}

// Every text node below ``node`` (math left alone) with the hit's matching words in <mark>.
function markWords(node, hit) {
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

// The abstract as app.js shows it, with the closest sentence underlined and the matching words marked.
function evidenceAbstract(hit, text) {
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

async function recommendNow(library) {
  const k = Math.min(MAX_K, parseInt($("k").value, 10) || 10);
  const body = {like: desk.like, unlike: desk.unlike, k, filters: activeFilters(), display: true,
                ...(library ? {library} : {})};
  $("status").textContent = "Recommending…";
  try {
    const found = await post("/recommend", body);
    renderHits($("results"), found.hits, true, false, "recommendation");
    onScreen = null;
    $("more").hidden = true;
    desk.view = {kind: "recommend", body};
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
async function importLibrary() {
  const file = $("library-file").files[0];
  if (!file) return;
  const kind = KINDS[file.name.split(".").pop().toLowerCase()];
  if (!kind) { $("status").textContent = "A library is a .bib, .ris, CSL-JSON (.json) or Zotero CSV file."; return; }
  await recommendNow({kind, text: await file.text()});
  $("library-file").value = "";
}

// The list on screen in a reference manager's format, asked of the API as the list was.
async function exportAs(format) {
  const suffix = {bibtex: "bib", ris: "ris", "csl-json": "json"}[format];
  let response;
  if (desk.view && desk.view.kind === "recommend") {
    response = await fetch("/recommend", {method: "POST", headers: {"Content-Type": "application/json"},
                                          body: JSON.stringify({...desk.view.body, format, display: false})});
  } else if (onScreen) {
    const params = new URLSearchParams({q: onScreen.q, k: onScreen.hits.length, mode: onScreen.mode, format});
    for (const f of onScreen.filters) params.append("filter", f);
    response = await fetch("/search?" + params);
  } else return;
  if (!response.ok) { $("status").textContent = readable(response.status, ""); return; }
  const link = el("a", {href: URL.createObjectURL(await response.blob()), download: `results.${suffix}`});
  document.body.append(link);
  link.click();
  link.remove();
}

async function listWatches() {
  let found;
  try { found = await api("/watches"); } catch (e) { return; }
  if (!found.watches.length) return;
  $("watches").hidden = false;
  $("watch-list").replaceChildren(...found.watches.map((w) => el("li", {},
    el("strong", {textContent: w.name}), ": ",
    w.query || `like ${w.like.join(", ") || "—"}${w.library ? " + a library" : ""}`,
    el("span", {className: "meta", textContent: ` · last run ${w.last_run || "never"} (${plural(w.runs, "run")})`}))));
}

function startDesk() {
  deskFromUrl();
  deskCount();
  $("recommend").addEventListener("click", () => recommendNow(null));
  $("clear-marks").addEventListener("click", () => {
    desk.like = []; desk.unlike = []; deskToUrl(); deskCount();
    for (const b of document.querySelectorAll("button.mark")) b.setAttribute("aria-pressed", "false");
  });
  $("library-file").addEventListener("change", importLibrary);
  for (const format of ["bibtex", "ris", "csl-json"]) $(`export-${format}`).addEventListener("click", () => exportAs(format));
  window.addEventListener("popstate", deskFromUrl);
  listWatches();
}
startDesk();
