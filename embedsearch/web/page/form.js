// The search form and the URL: filter controls built from the index's fields, the form's state written
// to the address (Back restores it, a link shares it) and read back from it.
import {$, el} from "embedsearch/shared/dom.js";
import {LONG_QUERY, MAX_K, state} from "embedsearch/page/state.js";

const fieldLabel = (name) => { const words = name.replace(/[_.-]+/g, " ").trim(); return words[0].toUpperCase() + words.slice(1); };
const MANY = 12;  // more values than this: a searchable box (type to find one) rather than a long list

// ``typed``: called as a number is typed; ``chosen``: when a value is picked.
export function buildFilters(fields, typed, chosen) {
  const box = $("filters");
  box.replaceChildren();
  for (const field of fields) {
    if ((field.kind === "integer" || field.kind === "number") && field.min !== field.max) {
      for (const [op, label] of [[">=", "from"], ["<=", "to"]]) {
        const input = el("input", {type: "number", step: "any", placeholder: op === ">=" ? field.min : field.max});
        input.dataset.field = field.name; input.dataset.op = op;
        input.addEventListener("input", typed);
        box.append(el("label", {}, `${fieldLabel(field.name)} ${label} `, input));
      }
    } else if (field.values && field.values.length > MANY) {
      const list = el("datalist", {id: `values-${field.name}`},
                      ...field.values.map((v) => el("option", {value: String(v.value), label: `${v.count} papers`})));
      const input = el("input", {type: "search", placeholder: `any of ${field.distinct || field.values.length}`,
                                 className: "values"});
      input.setAttribute("list", list.id);
      input.dataset.field = field.name; input.dataset.op = "=";
      input.addEventListener("change", chosen);
      box.append(el("label", {}, `${fieldLabel(field.name)} `, input, list));
    } else if (field.values && field.values.length > 1) {
      const select = el("select", {}, el("option", {value: "", textContent: "any"}));
      for (const v of field.values) select.append(el("option", {value: String(v.value), textContent: `${v.value} (${v.count})`}));
      select.dataset.field = field.name; select.dataset.op = "=";
      select.addEventListener("change", chosen);
      box.append(el("label", {}, `${fieldLabel(field.name)} `, select));
    }
  }
}

export function activeFilters() {
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
  for (const id of state.marks.like) params.append("like", id);
  for (const id of state.marks.unlike) params.append("unlike", id);
  return params;
}

export function remember(push) {
  const query = stateFromForm().toString();
  const url = "/" + (query ? "?" + query : "");
  if (url !== location.pathname + location.search) history[push ? "pushState" : "replaceState"]({}, "", url);
}

// The box grows with what is in it (a pasted abstract shows whole, up to the CSS height limit).
export function grow() { const q = $("q"); q.style.height = "auto"; q.style.height = `${q.scrollHeight + 2}px`; }

export function restoreForm() {
  const params = new URLSearchParams(location.search);
  $("q").value = params.get("q") || "";
  $("mode").value = ["hybrid", "dense", "lexical"].includes(params.get("mode")) ? params.get("mode") : "hybrid";
  const asked = parseInt(params.get("k"), 10) || 10;
  if (asked > MAX_K) state.capped = true;  // reset only when the reader changes the box
  $("k").value = String(Math.min(MAX_K, Math.max(1, asked)));
  const wanted = params.getAll("filter");
  for (const control of $("filters").querySelectorAll("[data-field]")) {
    const prefix = control.dataset.field + control.dataset.op;
    const given = wanted.find((f) => f.startsWith(prefix) && !"=<>".includes(f[prefix.length] || ""));
    control.value = given ? given.slice(prefix.length) : "";
  }
  grow();
}
