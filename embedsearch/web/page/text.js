// A paper's text as the page shows it: rendered for reading by the server (display=1: LaTeX and Markdown as
// plain text, math kept as its source), its math typeset here by the vendored KaTeX.
import katex from "embedsearch/vendor/katex/katex.min.mjs";
import {el} from "embedsearch/shared/dom.js";
import {typeset} from "embedsearch/shared/math.js";

export const shown = (hit) => hit.display || hit;  // the text rendered for reading, when the server gave it

export const mathText = (tag, props, text) => typeset(el(tag, props), text, katex);

export function preview(hit) {
  const paper = shown(hit);
  if (paper.title) return paper.title;
  const text = paper.text.replace(/\s+/g, " ");
  const stop = text.search(/[.?!] /);
  return stop > 0 && stop < 200 ? text.slice(0, stop + 1) : text.slice(0, 200) + (text.length > 200 ? "…" : "");
}

export function paperLink(id, text) {
  return el("a", {href: `/paper/${encodeURIComponent(id)}`, className: "paper-link", textContent: text});
}

export function describe(doc) {
  const parts = ["id " + doc.id];
  if (doc.topic) parts.push("topic: " + doc.topic.name);
  for (const [key, value] of Object.entries(doc.metadata || {})) parts.push(`${key}: ${value}`);
  return parts;
}
