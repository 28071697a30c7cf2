"use strict";
// The search page: results as you type with honest scores, state kept in the URL (Back restores it), a page
// per paper (/paper/ID), and a duplicate checker with the two texts side by side. Texts come rendered for
// reading (display=1: LaTeX and Markdown as plain text, math kept as its source and typeset here by KaTeX,
// shipped with the page). No other dependency.
const $ = (id) => document.getElementById(id);
const el = (tag, props = {}, ...children) => {
  const node = Object.assign(document.createElement(tag), props);
  node.append(...children.filter((c) => c !== null && c !== undefined));
  return node;
};
const LONG_QUERY = 1500;  // longer text goes by POST (a URL has room for about 2,000 characters)
let bands = {related: 0.3, close: 0.5, similar_related: 0.35, similar_close: 0.65};

function plural(n, word) { return `${n.toLocaleString()} ${word}${n === 1 ? "" : "s"}`; }

// An API error as a reader should see it: what went wrong and what to do, never a validator's message.
function readable(status, message) {
  if (status === 0) return "The server could not be reached. Is embedsearch serve still running?";
  if (status === 404) return "That paper is not in the index (it may have been removed).";
  if (status === 503) return "The index is busy. Try again in a few seconds.";
  if (status === 501) return message;  // not served here (a cluster's ingress): the message names what is
  if (status >= 500) return "The server could not answer this time. Try again; if it keeps failing, see its log.";
  if (status === 422 || status === 414 || status === 413) return "The request could not be read: " +
    (/characters|too large|long/.test(message) ? "the text is too long." : "check the query and the settings.");
  return message;  // 400 and 409 are written for a reader (a filter on an unknown field, a duplicate)
}

async function api(path, options = {}) {
  let response;
  try { response = await fetch(path, options); } catch (e) {
    if (e.name === "AbortError") throw e;
    throw new Error(readable(0, ""));
  }
  let body = null;
  try { body = await response.json(); } catch (e) { body = {error: response.statusText}; }
  if (!response.ok) throw new Error(readable(response.status, body.error || ""));
  return body;
}
const post = (path, body) => api(path, {method: "POST", headers: {"Content-Type": "application/json"},
                                        body: JSON.stringify(body)});
const shown = (hit) => hit.display || hit;  // the text rendered for reading, when the server gave it

// ``text`` in a ``tag`` with its $...$ and $$...$$ typeset by KaTeX; what KaTeX cannot read stays as its
// source (red, its error on hover), and without KaTeX all of it does: math is never dropped.
const MATH = /(?<!\\)\$\$(?=\S)([\s\S]+?)(?<=\S)\$\$|(?<![\\$])\$(?=[^\s$])([^$\n]*?[^\s$\\])\$(?!\$)/g;
function mathText(tag, props, text) {
  const node = el(tag, props);
  let last = 0;
  for (const m of text.matchAll(MATH)) {
    const span = el("span", {className: "math"});
    try {
      katex.render(m[1] ?? m[2], span, {displayMode: m[1] !== undefined, throwOnError: false});
    } catch (e) { span.textContent = m[0]; }
    node.append(text.slice(last, m.index), span);
    last = m.index + m[0].length;
  }
  node.append(text.slice(last));
  return node;
}

function preview(hit) {
  const paper = shown(hit);
  if (paper.title) return paper.title;
  const text = paper.text.replace(/\s+/g, " ");
  const stop = text.search(/[.?!] /);
  return stop > 0 && stop < 200 ? text.slice(0, stop + 1) : text.slice(0, 200) + (text.length > 200 ? "…" : "");
}

// What orders the results of each mode (the number shown), and what the band is (the same line the CLI prints).
const SCORES = {hybrid: "the fused score (meaning and words, each relative to the best candidate)",
                dense: "the cosine similarity (closeness in meaning)", lexical: "the BM25 score (how well the words match)"};
const scoreNote = (mode) => `Ordered by ${SCORES[mode]}; close, related and distant say how close in meaning ` +
                            "each is (cosine), whatever the order.";

// The band (a label), with the cosine it is read from only where the cosine also orders the list (dense
// searches, a paper's neighbours): a fused score, a BM25 or a recommendation's score beside a band word would
// contradict it, so those live in the tooltip under their names. ``abstracts``: neighbours of a paper or of a
// text, whose cosines run higher than a query's; ``order``: what orders the list.
const ORDERS = {cosine: "cosine", hybrid: "fused score", lexical: "BM25 score", dense: "cosine",
                recommendation: "recommendation score"};
function scoreBadge(hit, abstracts, order) {
  if (hit.listed) {  // a listing (no free words) is in date order: the date is what orders it
    const when = hit.metadata?.date ?? hit.metadata?.year ?? "undated";
    return el("span", {className: "score listed", textContent: String(when), title: "listed by date, newest first"});
  }
  const cosine = hit.cosine === null || hit.cosine === undefined ? 0 : hit.cosine;
  const named = ORDERS[order] || "score", byCosine = named === "cosine";
  const [related, close] = abstracts ? [bands.similar_related, bands.similar_close] : [bands.related, bands.close];
  return el("span", {className: `score ${hit.match}`,
    textContent: byCosine ? `${hit.match} ${cosine.toFixed(2)}` : hit.match,
    title: (byCosine ? "" : `${named} ${hit.score.toFixed(3)} orders the list; `) +
           `cosine ${cosine.toFixed(3)}${byCosine ? " orders the list and gives the band" : ""}: how close in ` +
           `meaning, comparable across ${abstracts ? "papers" : "queries and modes"}. close from ${close}, ` +
           `related from ${related}, below that distant.`});
}

function paperLink(id, text) {
  return el("a", {href: `/paper/${encodeURIComponent(id)}`, className: "paper-link", textContent: text});
}

// ---- filters and the URL -------------------------------------------------------------------------
const fieldLabel = (name) => { const words = name.replace(/[_.-]+/g, " ").trim(); return words[0].toUpperCase() + words.slice(1); };
const MANY = 12;  // more values than this: a searchable box (type to find one) rather than a long list

function buildFilters(fields) {
  const box = $("filters");
  box.replaceChildren();
  for (const field of fields) {
    if ((field.kind === "integer" || field.kind === "number") && field.min !== field.max) {
      for (const [op, label] of [[">=", "from"], ["<=", "to"]]) {
        const input = el("input", {type: "number", step: "any", placeholder: op === ">=" ? field.min : field.max});
        input.dataset.field = field.name; input.dataset.op = op;
        input.addEventListener("input", schedule);
        box.append(el("label", {}, `${fieldLabel(field.name)} ${label} `, input));
      }
    } else if (field.values && field.values.length > MANY) {
      const list = el("datalist", {id: `values-${field.name}`},
                      ...field.values.map((v) => el("option", {value: String(v.value), label: `${v.count} papers`})));
      const input = el("input", {type: "search", placeholder: `any of ${field.distinct || field.values.length}`,
                                 className: "values"});
      input.setAttribute("list", list.id);
      input.dataset.field = field.name; input.dataset.op = "=";
      input.addEventListener("change", () => run(true));
      box.append(el("label", {}, `${fieldLabel(field.name)} `, input, list));
    } else if (field.values && field.values.length > 1) {
      const select = el("select", {}, el("option", {value: "", textContent: "any"}));
      for (const v of field.values) select.append(el("option", {value: String(v.value), textContent: `${v.value} (${v.count})`}));
      select.dataset.field = field.name; select.dataset.op = "=";
      select.addEventListener("change", () => run(true));
      box.append(el("label", {}, `${fieldLabel(field.name)} `, select));
    }
  }
}

function activeFilters() {
  return [...$("filters").querySelectorAll("[data-field]")]
    .filter((c) => c.value !== "")
    .map((c) => `${c.dataset.field}${c.dataset.op}${c.value}`);
}

function stateFromForm() {
  const params = new URLSearchParams();
  const q = $("q").value.trim();
  if (q && q.length <= LONG_QUERY) params.set("q", q);
  if ($("mode").value !== "hybrid") params.set("mode", $("mode").value);
  if ($("k").value && $("k").value !== "10") params.set("k", $("k").value);
  for (const f of activeFilters()) params.append("filter", f);
  const now = new URLSearchParams(location.search);  // desk.js's marks stay in the URL (before it has loaded too)
  const marks = typeof desk !== "undefined" ? desk : {like: now.getAll("like"), unlike: now.getAll("unlike")};
  for (const id of marks.like) params.append("like", id);
  for (const id of marks.unlike) params.append("unlike", id);
  return params;
}

function remember(push) {
  const query = stateFromForm().toString();
  const url = "/" + (query ? "?" + query : "");
  if (url !== location.pathname + location.search) history[push ? "pushState" : "replaceState"]({}, "", url);
}

// The box grows with what is in it (a pasted abstract shows whole, up to the CSS height limit).
function grow() { const q = $("q"); q.style.height = "auto"; q.style.height = `${q.scrollHeight + 2}px`; }

function restoreForm() {
  const params = new URLSearchParams(location.search);
  $("q").value = params.get("q") || "";
  $("mode").value = ["hybrid", "dense", "lexical"].includes(params.get("mode")) ? params.get("mode") : "hybrid";
  const asked = parseInt(params.get("k"), 10) || 10;
  if (asked > MAX_K) capped = true;  // reset only when the reader changes the box
  $("k").value = String(Math.min(MAX_K, Math.max(1, asked)));
  const wanted = params.getAll("filter");
  for (const control of $("filters").querySelectorAll("[data-field]")) {
    const prefix = control.dataset.field + control.dataset.op;
    const given = wanted.find((f) => f.startsWith(prefix) && !"=<>".includes(f[prefix.length] || ""));
    control.value = given ? given.slice(prefix.length) : "";
  }
  grow();
}

// ---- results -------------------------------------------------------------------------------------
function renderHits(list, hits, abstracts = false, append = false, order = abstracts ? "cosine" : "hybrid") {
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
    if (typeof decorate === "function") decorate(hit, item);  // desk.js: marks, evidence
  }
}

function similarSection(id) {
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
  const abstract = typeof evidenceAbstract === "function" ? evidenceAbstract(hit, shown(hit).text)
    : mathText("p", {className: "abstract"}, shown(hit).text);
  detail.append(abstract, meta,
                el("div", {className: "actions"}, paperLink(hit.id, "Paper page"), similarButton, mapLink),
                similarList);
  try {
    const doc = await api(`/documents/${encodeURIComponent(hit.id)}`);
    meta.textContent = describe(doc).join(" · ") + ranking;
  } catch (e) { meta.textContent = "id " + hit.id + ranking; }
}

function describe(doc) {
  const parts = ["id " + doc.id];
  if (doc.topic) parts.push("topic: " + doc.topic.name);
  for (const [key, value] of Object.entries(doc.metadata || {})) parts.push(`${key}: ${value}`);
  return parts;
}

let timer = null, inflight = null, capped = false;  // capped: more results were asked for than one search gives
let onScreen = null;  // the search on screen, so "More results" asks for its next page: {q, k, mode, filters, hits}
const MAX_K = 100;
function schedule() { clearTimeout(timer); timer = setTimeout(() => run(false), 250); }

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

async function run(push) {
  clearTimeout(timer);
  remember(push);
  const q = $("q").value.trim();
  onScreen = null;
  $("more").hidden = true;
  if (!q) { $("results").replaceChildren(); $("status").textContent = ""; return; }
  if (inflight) inflight.abort();
  inflight = new AbortController();
  const asked = Math.max(1, parseInt($("k").value, 10) || 10), k = Math.min(MAX_K, asked);
  if (asked > k) { $("k").value = String(k); capped = true; }  // the box says what is shown
  const mode = $("mode").value, filters = activeFilters();
  $("status").textContent = "Searching…";
  $("score-note").textContent = "";
  try {
    const body = await page(q, k, mode, filters, 0, inflight.signal);
    listed(body);
    renderHits($("results"), body.hits, false, false, mode);
    onScreen = {q, k, mode, filters, hits: body.hits};
    if (typeof desk !== "undefined") desk.view = null;
    $("status").textContent = status(body) + (capped ? ` (at most ${MAX_K} per page)` : "");
    $("more").hidden = !body.more;
    if (body.hits.length && body.total == null) $("score-note").textContent = scoreNote(mode);
    offerExport(body.hits, q, mode);
  } catch (e) {
    if (e.name !== "AbortError") { $("results").replaceChildren(); $("status").textContent = e.message; }
  }
}

async function moreResults() {
  if (!onScreen) return;
  const asked = onScreen, button = $("more");
  button.disabled = true;
  try {
    const body = await page(asked.q, asked.k, asked.mode, asked.filters, asked.hits.length);
    if (onScreen !== asked) return;  // another search replaced this one meanwhile
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
function offerExport(hits, q, mode) {
  const rows = hits.map((h) => Object.fromEntries(EXPORTED.map((f) => [f, h[f] ?? ""])));
  const csv = [EXPORTED, ...rows.map((r) => EXPORTED.map((f) => r[f]))].map((r) => r.map(csvCell).join(",")).join("\r\n");
  $("export-csv").href = URL.createObjectURL(new Blob([csv + "\r\n"], {type: "text/csv"}));
  $("export-json").href = URL.createObjectURL(new Blob([JSON.stringify({query: q, mode, hits}, null, 1)],
                                                      {type: "application/json"}));
  $("result-actions").hidden = !hits.length;
  $("like-abstract").hidden = q.length < 300;
}

async function likeAbstract() {
  const text = $("q").value.trim();
  $("status").textContent = "Searching…";
  try {
    const body = await post("/similar", {text, k: Math.min(MAX_K, parseInt($("k").value, 10) || 10), display: true});
    renderHits($("results"), body.hits, true);
    onScreen = null;
    $("more").hidden = true;
    $("status").textContent = `${plural(body.hits.length, "paper")} like this abstract, by closeness in meaning`;
    $("score-note").textContent = scoreNote("dense");
    offerExport(body.hits, text, "dense");
  } catch (e) { $("status").textContent = e.message; }
}

function listed(body) {
  if (body.total != null) for (const hit of body.hits) hit.listed = true;
}

function status(body) {
  if (body.total != null) {
    return `${plural(body.total, "paper")} match every term (exact over the whole index), newest first; ` +
           `${body.hits.length} shown`;
  }
  if (!body.hits.length) return "No results: no abstract uses these words. Try the meaning or hybrid mode.";
  if (body.match === "none") {
    const best = Math.max(...body.hits.map((h) => h.cosine || 0));
    return `No close match: none of these ${plural(body.hits.length, "paper")} is about your query ` +
           `(best cosine ${best.toFixed(2)}, related starts at ${bands.related}).`;
  }
  return plural(body.hits.length, "result");
}

// ---- duplicate check -----------------------------------------------------------------------------
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
function pairView(pair, ownLabel) {
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

async function checkDuplicates(event) {
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

async function similarToAbstract() {
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

const COLUMNS = ["submission", "title", "verdict", "matched paper", "matched title", "cosine", "wording shared (%)"];
// Text from the data that a spreadsheet would run (=, +, -, @, a tab or CR first) gets a leading apostrophe
// (OWASP), numbers stay numbers: as disk/csvout.py does for every CSV the server writes.
const csvCell = (v) => {
  const s = typeof v === "string" && /^[=+\-@\t\r]/.test(v) ? `'${v}` : String(v);
  return /[",\n\r]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
};

// A batch judged against the index: a table with one row per submission (the unflagged ones too), and the
// same rows as a CSV to download (the columns of the API's format=csv). It replaces any earlier answer.
async function checkBatch(event) {
  event.preventDefault();
  const file = $("batch-file").files[0];
  if (!file) { $("batch-status").textContent = "Choose a JSONL or CSV file of submissions first."; return; }
  clearAnswers();
  $("batch-status").textContent = `Checking ${file.name}…`;
  try {
    const response = await fetch(`/duplicates/check-file?name=${encodeURIComponent(file.name)}&format=json`,
                                 {method: "POST", body: file});
    let body = {};
    try { body = await response.json(); } catch (e) { /* not JSON */ }
    if (!response.ok) throw new Error(response.status === 400 ? body.error : readable(response.status, body.error || ""));
    const ids = new Set(body.submissions.map((r) => r.id));
    const cells = (r) => [r.id, r.title || "", r.verdict, r.match || "", r.match_title || "",
                          r.cosine === null || r.cosine === undefined ? "" : Number(r.cosine.toFixed(3)),
                          r.overlap === null || r.overlap === undefined ? "" : Math.round(100 * r.overlap)];
    const table = el("table", {className: "batch"}, el("caption", {textContent: `${file.name}: one row per submission`}),
      el("thead", {}, el("tr", {}, ...["Submission", "Verdict", "Matched paper", "Cosine", "Wording shared"]
                                     .map((h) => el("th", {scope: "col", textContent: h})))),
      el("tbody", {}, ...body.submissions.map((r) => el("tr", {className: r.match ? "flagged" : "clear"},
        el("td", {}, el("span", {className: "id", textContent: r.id}), r.title ? el("br") : null,
           r.title ? mathText("span", {className: "title"}, r.title) : null),
        el("td", {}, el("span", {className: `verdict ${r.match ? r.verdict : "none"}`, textContent: r.verdict})),
        el("td", {}, !r.match ? "" : ids.has(r.match) ? `${r.match_title} (submission ${r.match} of this batch)`
                                                     : paperLink(r.match, r.match_title || r.match)),
        el("td", {textContent: cells(r)[5]}), el("td", {textContent: r.match ? `${cells(r)[6]}%` : ""})))));
    $("batch-results").replaceChildren(table);
    const csv = [COLUMNS, ...body.submissions.map(cells)].map((row) => row.map(csvCell).join(",")).join("\r\n") + "\r\n";
    const link = $("batch-download");
    link.href = URL.createObjectURL(new Blob([csv], {type: "text/csv"}));
    link.download = file.name.replace(/\.[^.]+$/, "") + "-duplicates.csv";
    link.hidden = false;
    const flagged = body.submissions.filter((r) => r.match).length;
    $("batch-status").textContent = `${plural(body.judged, "submission")} checked: ${flagged} flagged, ` +
      `${body.judged - flagged} with no duplicate.`;
  } catch (e) { $("batch-status").textContent = e.message; }
}

// A new check replaces the answer of the one before, single or batch.
function clearAnswers() {
  for (const id of ["dup-results", "batch-results"]) $(id).replaceChildren();
  for (const id of ["dup-status", "batch-status"]) $(id).textContent = "";
  $("batch-download").hidden = true;
}

// ---- a page per paper ----------------------------------------------------------------------------
async function showPaper(id) {
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

// Who could review this paper: shown only when the server was started with --reviewers.
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

function flip(pair) {
  const d = pair.display;
  return {...pair, a: pair.b, b: pair.a,
          display: d && {a: d.b, b: d.a, a_title: d.b_title, b_title: d.a_title, passages: d.passages}};
}

// ---- start ---------------------------------------------------------------------------------------
async function start() {
  // Handlers first: a form used before /info answers must not fall back to a native submit (a reload).
  $("q").addEventListener("input", () => { grow(); schedule(); });
  $("q").addEventListener("keydown", (e) => {  // Enter searches; Shift+Enter is a new line
    if (e.key === "Enter" && !e.shiftKey) { e.preventDefault(); run(true); }
  });
  $("like-abstract").addEventListener("click", likeAbstract);
  $("more").addEventListener("click", moreResults);
  $("search-form").addEventListener("submit", (e) => { e.preventDefault(); run(true); });
  $("mode").addEventListener("change", () => run(true));
  $("k").addEventListener("change", () => { capped = false; run(true); });
  $("dup-form").addEventListener("submit", checkDuplicates);
  $("dup-similar").addEventListener("click", similarToAbstract);
  $("batch-form").addEventListener("submit", checkBatch);
  window.addEventListener("popstate", () => { restoreForm(); run(false); });
  document.addEventListener("keydown", (e) => {
    if (e.key === "/" && !["INPUT", "TEXTAREA", "SELECT"].includes(document.activeElement.tagName)) {
      e.preventDefault(); $("q").focus();
    }
  });
  const paper = location.pathname.match(/^\/paper\/(.+)$/);
  if (paper) showPaper(decodeURIComponent(paper[1]));
  restoreForm();
  const filtered = new URLSearchParams(location.search).has("filter");  // wait for the filter controls
  if ($("q").value && !filtered) run(false);
  try {
    const info = await api("/info");
    bands = info.bands || bands;
    $("about").textContent = `${plural(info.documents, "paper")} · ${info.name || info.model}`;
    buildFilters(info.fields);
    restoreForm();
    if ($("q").value && filtered) run(false);
  } catch (e) { $("about").textContent = "The index could not be read: " + e.message; }
}
start();
