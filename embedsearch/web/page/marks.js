// The reader's marks on results, liked or not for me, kept in the URL as like=ID and unlike=ID (a set is
// shareable), and what every listed hit carries: the two marks, the seeds a recommendation is closest to,
// its matching words marked in its title.
import {$, el} from "embedsearch/shared/dom.js";
import {markWords} from "embedsearch/page/evidence.js";
import {state} from "embedsearch/page/state.js";

export function marksFromUrl() {
  const params = new URLSearchParams(location.search);
  state.marks.like = params.getAll("like");
  state.marks.unlike = params.getAll("unlike").filter((id) => !state.marks.like.includes(id));
}

export function marksToUrl() {
  const params = new URLSearchParams(location.search);
  params.delete("like"); params.delete("unlike");
  for (const id of state.marks.like) params.append("like", id);
  for (const id of state.marks.unlike) params.append("unlike", id);
  const query = params.toString();
  history.replaceState({}, "", location.pathname + (query ? "?" + query : ""));
}

export function countMarks() {
  const n = state.marks.like.length, m = state.marks.unlike.length;
  $("recommend").hidden = n === 0;
  $("recommend").textContent = `Recommend from these (${n} liked${m ? `, ${m} not for me` : ""})`;
  $("clear-marks").hidden = n + m === 0;
}

export function clearMarks() {
  state.marks.like = []; state.marks.unlike = [];
  marksToUrl(); countMarks();
  for (const b of document.querySelectorAll("button.mark")) b.setAttribute("aria-pressed", "false");
}

function mark(id, set, button, other) {
  const list = state.marks[set], away = state.marks[set === "like" ? "unlike" : "like"];
  const at = list.indexOf(id);
  if (at >= 0) list.splice(at, 1); else { list.push(id); if (away.includes(id)) away.splice(away.indexOf(id), 1); }
  button.setAttribute("aria-pressed", String(list.includes(id)));
  other.setAttribute("aria-pressed", "false");
  marksToUrl();
  countMarks();
}

export function decorate(hit, item) {
  const like = el("button", {type: "button", className: "mark like", textContent: "Like"});
  const unlike = el("button", {type: "button", className: "mark unlike", textContent: "Not for me"});
  like.setAttribute("aria-pressed", String(state.marks.like.includes(hit.id)));
  unlike.setAttribute("aria-pressed", String(state.marks.unlike.includes(hit.id)));
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
