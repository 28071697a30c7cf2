// A batch of submissions judged against the index: a table with one row per submission (the unflagged ones
// too), and the same rows as a CSV to download (the columns of the API's format=csv). It replaces any
// earlier answer.
import {$, el, plural} from "embedsearch/shared/dom.js";
import {csvCell, readable} from "embedsearch/page/api.js";
import {clearAnswers} from "embedsearch/page/duplicates.js";
import {mathText, paperLink} from "embedsearch/page/text.js";

const COLUMNS = ["submission", "title", "verdict", "matched paper", "matched title", "cosine", "wording shared (%)"];
const cells = (r) => [r.id, r.title || "", r.verdict, r.match || "", r.match_title || "",
                      r.cosine === null || r.cosine === undefined ? "" : Number(r.cosine.toFixed(3)),
                      r.overlap === null || r.overlap === undefined ? "" : Math.round(100 * r.overlap)];

function row(r, ids) {
  return el("tr", {className: r.match ? "flagged" : "clear"},
    el("td", {}, el("span", {className: "id", textContent: r.id}), r.title ? el("br") : null,
       r.title ? mathText("span", {className: "title"}, r.title) : null),
    el("td", {}, el("span", {className: `verdict ${r.match ? r.verdict : "none"}`, textContent: r.verdict})),
    el("td", {}, !r.match ? "" : ids.has(r.match) ? `${r.match_title} (submission ${r.match} of this batch)`
                                                 : paperLink(r.match, r.match_title || r.match)),
    el("td", {textContent: cells(r)[5]}), el("td", {textContent: r.match ? `${cells(r)[6]}%` : ""}));
}

export async function checkBatch(event) {
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
    const table = el("table", {className: "batch"}, el("caption", {textContent: `${file.name}: one row per submission`}),
      el("thead", {}, el("tr", {}, ...["Submission", "Verdict", "Matched paper", "Cosine", "Wording shared"]
                                     .map((h) => el("th", {scope: "col", textContent: h})))),
      el("tbody", {}, ...body.submissions.map((r) => row(r, ids))));
    $("batch-results").replaceChildren(table);
    const csv = [COLUMNS, ...body.submissions.map(cells)].map((line) => line.map(csvCell).join(",")).join("\r\n") + "\r\n";
    const link = $("batch-download");
    link.href = URL.createObjectURL(new Blob([csv], {type: "text/csv"}));
    link.download = file.name.replace(/\.[^.]+$/, "") + "-duplicates.csv";
    link.hidden = false;
    const flagged = body.submissions.filter((r) => r.match).length;
    $("batch-status").textContent = `${plural(body.judged, "submission")} checked: ${flagged} flagged, ` +
      `${body.judged - flagged} with no duplicate.`;
  } catch (e) { $("batch-status").textContent = e.message; }
}
