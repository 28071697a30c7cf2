"""Abstracts as a reader should see them: LaTeX (``\\emph{exit rate}``, ``$16.36$``, ``---``, ``\\cite{x}``)
and Markdown emphasis (``**Negation Neglect**``) turned into plain Unicode text by pylatexenc. For display
only: stored, searched and exported text stays as given.

Abstracts are rarely whole LaTeX documents, so what plain text means by ``%``, ``&``, ``#``, ``$5 million``
and ``~30`` is kept: those are escaped before parsing (a ``$...$`` pair is math only when it neither starts
nor ends with a space, as TeX authors write it)."""

from __future__ import annotations

import re
from functools import lru_cache

MARKUP = re.compile(r"\\[A-Za-z@%&$#_{}\\ ,;!\"'^`~=.]|\$[^$\s]|\*\*|__|---?|``|''|~|\{")
_EMPHASIS = re.compile(r"(\*\*|__)(?=\S)(.+?)(?<=\S)\1")
_CODE = re.compile(r"`([^`\n]+)`")
_LINK = re.compile(r"\[([^\]\n]+)\]\((?:https?://|www\.)[^)\s]+\)")
_SPECIALS = re.compile(r"(?<!\\)([%&#])")
_TILDE = re.compile(r"(?<![\w}\\])~(?=\d)")
_DOLLARS = re.compile(r"(?<!\\)\$")
_MATH = re.compile(r"(?<!\\)\$\$(?=\S)(.+?)(?<=\S)\$\$|(?<![\\$])\$(?=[^\s$])([^$\n]*?[^\s$\\])\$(?!\$)", re.S)
_HELD = re.compile(r"MATHSPAN(\d+)Z")
_CITATIONS = (("cite", "[%s]"), ("citep", "[%s]"), ("citet", "[%s]"), ("ref", "%s"), ("eqref", "(%s)"),
              ("autoref", "%s"), ("url", "%s"), ("href", "%s"), ("footnote", " (%s)"))


def readable(text: str | None, keep_math: bool = False) -> str | None:
    """``text`` with its markup rendered as plain text (unchanged, at no cost, when it holds none);
    ``keep_math``: its math (``$$...$$``, and ``$...$`` as ``_escape_dollars`` tells math from a price)
    left as the source, for a page that typesets it, so neither braces nor a macro are lost."""
    if not text or not MARKUP.search(text):
        return text
    if not keep_math:
        return _render(text)
    spans: list[str] = []

    def hold(match: re.Match) -> str:
        spans.append(match.group(0))
        return f"MATHSPAN{len(spans) - 1}Z"

    return _HELD.sub(lambda m: spans[int(m.group(1))], _render(_MATH.sub(hold, text)))


@lru_cache(maxsize=2048)
def _render(text: str) -> str:
    text = _LINK.sub(r"\1", _CODE.sub(r"\1", _EMPHASIS.sub(r"\2", text)))
    text = _TILDE.sub(r"\\textasciitilde{}", _SPECIALS.sub(r"\\\1", _escape_dollars(text)))
    try:
        out = _converter().latex_to_text(text)
    except Exception:  # pylatexenc is tolerant; anything it still cannot read is shown as given
        return text
    return " ".join(out.replace("\xa0", " ").split())


def _escape_dollars(text: str) -> str:
    """Escape every ``$`` that does not open or close inline math (currency, a lone sign)."""
    out, position, signs = [], 0, [m.start() for m in _DOLLARS.finditer(text)]
    i = 0
    while i < len(signs):
        start = signs[i]
        end = signs[i + 1] if i + 1 < len(signs) else None
        inner = text[start + 1:end] if end is not None else ""
        if end is not None and inner and not inner[0].isspace() and not inner[-1].isspace() and "\n" not in inner:
            out.append(text[position:end + 1])
            position, i = end + 1, i + 2
            continue
        out.append(text[position:start] + "\\$")
        position, i = start + 1, i + 1
    return "".join(out) + text[position:]


def _last_argument(template: str):
    def replace(node, l2tobj) -> str:
        given = [a for a in (node.nodeargd.argnlist if node.nodeargd else []) if a is not None]
        return template % (l2tobj.nodelist_to_text([given[-1]]).strip() if given else "")

    return replace


@lru_cache(maxsize=1)
def _converter():
    from pylatexenc.latex2text import LatexNodes2Text, MacroTextSpec, get_default_latex_context_db

    context = get_default_latex_context_db()
    context.add_context_category("embedsearch", prepend=True, macros=[
        MacroTextSpec(name, simplify_repl=_last_argument(template)) for name, template in _CITATIONS])
    return LatexNodes2Text(latex_context=context, math_mode="text")
