"use strict";
// The search page: results as you type, filters built from the index's fields, expandable results with
// similar papers and topic, and a duplicate checker with shared passages highlighted. No dependencies.
const $ = (id) => document.getElementById(id);
const el = (tag, props = {}, ...children) => {
  const node = Object.assign(document.createElement(tag), props);
  node.append(...children.filter((c) => c !== null && c !== undefined));
  return node;
};

async function api(path, options = {}) {
  const response = await fetch(path, options);
  let body = null;
  try { body = await response.json(); } catch (e) { body = {error: response.statusText}; }
  if (!response.ok) throw new Error(body.error || ("HTTP " + response.status));
  return body;
}

function preview(hit) {
  if (hit.title) return hit.title;
  const text = hit.text.replace(/\s+/g, " ");
  const stop = text.search(/[.?!] /);
  return stop > 0 && stop < 200 ? text.slice(0, stop + 1) : text.slice(0, 200) + (text.length > 200 ? "…" : "");
}

// ---- filters -------------------------------------------------------------------------------------
function buildFilters(fields) {
  const box = $("filters");
  box.replaceChildren();
  for (const field of fields) {
    if ((field.kind === "integer" || field.kind === "number") && field.min !== field.max) {
      for (const [op, label] of [[">=", "from"], ["<=", "to"]]) {
        const input = el("input", {type: "number", step: "any", placeholder: op === ">=" ? field.min : field.max});
        input.dataset.field = field.name; input.dataset.op = op;
        input.addEventListener("input", schedule);
        box.append(el("label", {}, `${field.name} ${label} `, input));
      }
    } else if (field.values && field.values.length > 1) {
      const select = el("select", {}, el("option", {value: "", textContent: "any"}));
      for (const v of field.values) select.append(el("option", {value: String(v.value), textContent: `${v.value} (${v.count})`}));
      select.dataset.field = field.name; select.dataset.op = "=";
      select.addEventListener("change", () => run(true));
      box.append(el("label", {}, `${field.name} `, select));
    }
  }
}

function activeFilters() {
  return [...$("filters").querySelectorAll("[data-field]")]
    .filter((c) => c.value !== "")
    .map((c) => `${c.dataset.field}${c.dataset.op}${c.value}`);
}

// ---- results -------------------------------------------------------------------------------------
function renderHits(list, hits, withScores = true) {
  list.replaceChildren();
  for (const hit of hits) {
    const detail = el("div", {className: "detail", hidden: true});
    const toggle = el("button", {className: "toggle", type: "button"},
      withScores ? el("span", {className: "score", textContent: hit.score.toFixed(3)}) : null,
      el("span", {className: "title", textContent: preview(hit)}), " ",
      el("span", {className: "id", textContent: hit.id}));
    toggle.setAttribute("aria-expanded", "false");
    toggle.addEventListener("click", () => toggleDetail(hit, toggle, detail));
    list.append(el("li", {className: "hit"}, toggle, detail));
  }
}

async function toggleDetail(hit, toggle, detail) {
  const open = toggle.getAttribute("aria-expanded") !== "true";
  toggle.setAttribute("aria-expanded", String(open));
  detail.hidden = !open;
  if (!open || detail.childElementCount) return;
  const meta = el("p", {className: "meta", textContent: "id " + hit.id});
  const similarList = el("ol", {className: "similar", "aria-label": "similar papers"});
  const similarButton = el("button", {type: "button", className: "link", textContent: "Similar papers"});
  similarButton.addEventListener("click", async () => {
    similarButton.disabled = true;
    try {
      const body = await api(`/similar/${encodeURIComponent(hit.id)}?k=5`);
      renderHits(similarList, body.hits);
    } catch (e) { similarList.replaceChildren(el("li", {textContent: e.message})); }
  });
  const mapLink = el("a", {href: `/map?focus=${encodeURIComponent(hit.id)}`, textContent: "Show on the topic map"});
  detail.append(el("p", {className: "abstract", textContent: hit.text}), meta,
                el("div", {className: "actions"}, similarButton, mapLink), similarList);
  try {
    const doc = await api(`/documents/${encodeURIComponent(hit.id)}`);
    const parts = ["id " + doc.id];
    if (doc.topic) parts.push("topic: " + doc.topic.label);
    for (const [key, value] of Object.entries(doc.metadata || {})) parts.push(`${key}: ${value}`);
    meta.textContent = parts.join(" · ");
  } catch (e) { meta.textContent = "id " + hit.id; }
}

let timer = null, inflight = null;
function schedule() { clearTimeout(timer); timer = setTimeout(() => run(false), 250); }

async function run(now) {
  clearTimeout(timer);
  const q = $("q").value.trim();
  if (!q) { $("results").replaceChildren(); $("status").textContent = ""; return; }
  if (inflight) inflight.abort();
  inflight = new AbortController();
  const params = new URLSearchParams({q, k: $("k").value || "10", mode: $("mode").value});
  for (const f of activeFilters()) params.append("filter", f);
  $("status").textContent = "Searching…";
  try {
    const body = await api("/search?" + params, {signal: inflight.signal});
    renderHits($("results"), body.hits);
    $("status").textContent = body.hits.length ? `${body.hits.length} results` : "No results";
  } catch (e) {
    if (e.name !== "AbortError") { $("results").replaceChildren(); $("status").textContent = e.message; }
  }
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

async function checkDuplicates(event) {
  event.preventDefault();
  const text = $("dup-text").value;
  const box = $("dup-results");
  box.replaceChildren();
  $("dup-status").textContent = "Checking…";
  try {
    const report = await api("/duplicates/check", {method: "POST", headers: {"Content-Type": "application/json"},
                                                    body: JSON.stringify({text})});
    const pairs = report.groups.flatMap((g) => g.pairs);
    $("dup-status").textContent = pairs.length
      ? `Flagged: ${pairs.length} match(es) in the index` : "No duplicates found in the index";
    for (const pair of pairs) {
      let other = {text: ""};
      try { other = await api(`/documents/${encodeURIComponent(pair.b)}`); } catch (e) { /* removed since */ }
      box.append(el("div", {className: "match"},
        el("p", {}, el("span", {className: `verdict ${pair.verdict}`, textContent: pair.verdict}),
           ` · cosine ${pair.cosine.toFixed(3)} · overlap ${(100 * pair.overlap).toFixed(0)}% · `,
           el("span", {className: "id", textContent: pair.b})),
        el("h3", {textContent: "Indexed abstract"}), highlighted(other.text, pair.passages),
        el("h3", {textContent: "Your abstract"}), highlighted(text, pair.passages)));
    }
  } catch (e) { $("dup-status").textContent = e.message; }
}

// ---- start ---------------------------------------------------------------------------------------
async function start() {
  // Handlers first: a form used before /info answers must not fall back to a native submit (a reload).
  $("q").addEventListener("input", schedule);
  $("search-form").addEventListener("submit", (e) => { e.preventDefault(); run(true); });
  $("mode").addEventListener("change", () => run(true));
  $("k").addEventListener("change", () => run(true));
  $("dup-form").addEventListener("submit", checkDuplicates);
  document.addEventListener("keydown", (e) => {
    if (e.key === "/" && !["INPUT", "TEXTAREA", "SELECT"].includes(document.activeElement.tagName)) {
      e.preventDefault(); $("q").focus();
    }
  });
  const q = new URLSearchParams(location.search).get("q");
  if (q) { $("q").value = q; run(true); }
  try {
    const info = await api("/info");
    $("about").textContent = `${info.documents.toLocaleString()} papers · ${info.model} · generation ${info.generation}`;
    buildFilters(info.fields);
  } catch (e) { $("about").textContent = "The index could not be read: " + e.message; }
}
start();
