// The search page (/ and /paper/ID): results as you type with honest scores, state kept in the URL (Back
// restores it), a page per paper, a duplicate checker with the two texts side by side, and the researcher's
// desk (marks, recommendations, a library, exports, watches). Every module is one of this folder's or
// shared with the map (../shared); KaTeX is vendored. No other dependency.
import {$, plural} from "embedsearch/shared/dom.js";
import {api} from "embedsearch/page/api.js";
import {checkBatch} from "embedsearch/page/batch.js";
import {checkDuplicates, similarToAbstract} from "embedsearch/page/duplicates.js";
import {buildFilters, grow, restoreForm} from "embedsearch/page/form.js";
import {clearMarks, countMarks, marksFromUrl} from "embedsearch/page/marks.js";
import {showPaper} from "embedsearch/page/paper.js";
import {exportAs, importLibrary, listWatches, recommendNow} from "embedsearch/page/recommend.js";
import {likeAbstract, moreResults, run, schedule} from "embedsearch/page/search.js";
import {state} from "embedsearch/page/state.js";

function listen() {  // before /info answers: a form used early must not fall back to a native submit (a reload)
  $("q").addEventListener("input", () => { grow(); schedule(); });
  $("q").addEventListener("keydown", (e) => {  // Enter searches; Shift+Enter is a new line
    if (e.key === "Enter" && !e.shiftKey) { e.preventDefault(); run(true); }
  });
  $("like-abstract").addEventListener("click", likeAbstract);
  $("more").addEventListener("click", moreResults);
  $("search-form").addEventListener("submit", (e) => { e.preventDefault(); run(true); });
  $("mode").addEventListener("change", () => run(true));
  $("k").addEventListener("change", () => { state.capped = false; run(true); });
  $("dup-form").addEventListener("submit", checkDuplicates);
  $("dup-similar").addEventListener("click", similarToAbstract);
  $("batch-form").addEventListener("submit", checkBatch);
  $("recommend").addEventListener("click", () => recommendNow(null));
  $("clear-marks").addEventListener("click", clearMarks);
  $("library-file").addEventListener("change", importLibrary);
  for (const format of ["bibtex", "ris", "csl-json"]) $(`export-${format}`).addEventListener("click", () => exportAs(format));
  window.addEventListener("popstate", () => { marksFromUrl(); restoreForm(); run(false); });
  document.addEventListener("keydown", (e) => {
    if (e.key === "/" && !["INPUT", "TEXTAREA", "SELECT"].includes(document.activeElement.tagName)) {
      e.preventDefault(); $("q").focus();
    }
  });
}

async function start() {
  marksFromUrl();
  countMarks();
  listen();
  const paper = location.pathname.match(/^\/paper\/(.+)$/);
  if (paper) showPaper(decodeURIComponent(paper[1]));
  restoreForm();
  const filtered = new URLSearchParams(location.search).has("filter");  // wait for the filter controls
  if ($("q").value && !filtered) run(false);
  listWatches();
  try {
    const info = await api("/info");
    state.bands = info.bands || state.bands;
    $("about").textContent = `${plural(info.documents, "paper")} · ${info.name || info.model}`;
    buildFilters(info.fields, schedule, () => run(true));
    restoreForm();
    if ($("q").value && filtered) run(false);
  } catch (e) { $("about").textContent = "The index could not be read: " + e.message; }
}

start();
