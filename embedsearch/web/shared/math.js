// $...$ and $$...$$ in a text typeset by KaTeX, for both pages. ``katex`` is the vendored module where the page
// loads it; without it (the standalone map, which shows math as read text) the text is set as written. What
// KaTeX cannot read stays as its source (red, its error on hover): math is never dropped.
export const MATH = /(?<!\\)\$\$(?=\S)([\s\S]+?)(?<=\S)\$\$|(?<![\\$])\$(?=[^\s$])([^$\n]*?[^\s$\\])\$(?!\$)/g;

export function typeset(node, text, katex = null) {
  node.textContent = "";
  if (!katex) { node.textContent = text; return node; }
  let last = 0;
  for (const m of text.matchAll(MATH)) {
    const span = document.createElement("span");
    span.className = "math";
    try {
      katex.render(m[1] ?? m[2], span, {displayMode: m[1] !== undefined, throwOnError: false});
    } catch (e) { span.textContent = m[0]; }
    node.append(text.slice(last, m.index), span);
    last = m.index + m[0].length;
  }
  node.append(text.slice(last));
  return node;
}
