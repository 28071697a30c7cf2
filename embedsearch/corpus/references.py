"""What the reference-manager formats share: one record shape (``id``, ``title``, ``abstract``, ``authors``,
``year``, ``doi``, ``eprint``, ``venue``), the keys a library entry is matched by (DOI, arXiv id, a title
with case, accents, LaTeX markup and braces removed), LaTeX in and out, and citation keys."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Sequence
from typing import Any

FIELDS = ("id", "title", "abstract", "authors", "year", "doi", "eprint", "venue", "index_id")
_STOP = {"a", "an", "the", "on", "of", "for", "and", "to", "in", "with", "towards", "toward", "from", "via", "is"}
_INDEX_ID = re.compile(r"embedsearch id: (.+)$")
_DOI = re.compile(r"10\.\d{4,9}/\S+", re.IGNORECASE)
_ARXIV = re.compile(r"(?:arxiv[:/]|abs/|^)(\d{4}\.\d{4,5}|[a-z\-]+(?:\.[A-Z]{2})?/\d{7})(?:v\d+)?", re.IGNORECASE)
_MATH = re.compile(r"(\$\$.+?\$\$|\$[^$]+\$|\\\(.+?\\\)|\\\[.+?\\\])", re.DOTALL)
_SPECIAL = {"\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "#": r"\#", "_": r"\_", "{": r"\{", "}": r"\}",
            "~": r"\textasciitilde{}", "^": r"\textasciicircum{}", "$": r"\$"}


def from_latex(text: str | None) -> str | None:
    """LaTeX source as text (accents, escapes and braces resolved), with ``$...$`` math kept as written."""
    if text is None:
        return None
    from pylatexenc.latex2text import LatexNodes2Text

    out = LatexNodes2Text(math_mode="verbatim", strict_latex_spaces=True).latex_to_text(text)
    return " ".join(out.split()) or None


def to_latex(text: str) -> str:
    """Text as BibTeX holds it: LaTeX's special characters escaped outside math, math kept as written."""
    parts = _MATH.split(text)
    return "".join(p if i % 2 else "".join(_SPECIAL.get(ch, ch) for ch in p) for i, p in enumerate(parts))


def normal_title(title: str | None) -> str:
    """A title as matching compares it: LaTeX resolved, accents, case, punctuation and spacing removed."""
    if not title:
        return ""
    text = from_latex(title.replace("{", "").replace("}", "")) or ""
    text = unicodedata.normalize("NFKD", text)
    text = "".join(ch for ch in text if not unicodedata.combining(ch)).casefold()
    return " ".join(re.sub(r"[^\w\s]", " ", text).split())


def normal_doi(value: Any) -> str:
    found = _DOI.search(str(value or ""))
    return found.group(0).rstrip(".").casefold() if found else ""


def arxiv_id(value: Any) -> str:
    """The arXiv identifier in an eprint field, an ``arXiv:`` note or an arxiv.org address, without version. A
    number (an id a metadata column read as one: 704.0009) is written back with arXiv's digits: four after
    the point before 2015 (``YYMM`` < 1501), five from then on."""
    if isinstance(value, float) and value > 0:
        month = int(value)
        digits = 5 if month >= 1501 else 4
        value = f"{month:04d}.{round((value - month) * 10 ** digits):0{digits}d}"
    text = str(value or "").strip()
    found = _ARXIV.search(text.replace("arxiv.org/abs/", "abs/").replace("arxiv.org/pdf/", "abs/"))
    return found.group(1).casefold() if found else ""


def index_id(note: Any) -> str:
    """The index id an exported entry carries in its note (``embedsearch id: ...``), so it matches back exactly."""
    found = _INDEX_ID.search(str(note or "").strip())
    return found.group(1).strip() if found else ""


def note_of(doc_id: str) -> str:
    return f"embedsearch id: {doc_id}"


def person(name: str) -> str:
    """``Last, First`` as ``First Last`` (other forms unchanged)."""
    name = " ".join(name.split())
    if "," in name:
        last, _, first = name.partition(",")
        return f"{first.strip()} {last.strip()}".strip()
    return name


def year_of(value: Any) -> int | None:
    found = re.search(r"\b(1[5-9]\d\d|2\d\d\d)\b", str(value or ""))
    return int(found.group(1)) if found else None


def record(**values: Any) -> dict[str, Any]:
    """A record with the shared fields that have a value (empty strings and lists dropped)."""
    return {k: v for k, v in values.items() if k in FIELDS and v not in (None, "", [], ())}


def _surname(authors: Sequence[str]) -> str:
    if not authors:
        return "anon"
    last = authors[0].split()[-1] if authors[0].split() else "anon"
    return normal_title(last).replace(" ", "") or "anon"


def citation_keys(records: Iterable[dict[str, Any]]) -> list[str]:
    """``author year firstword`` keys (``vaswani2017attention``), made unique with a, b, ... in order."""
    used: set[str] = set()
    keys = []
    for item in records:
        words = [w for w in normal_title(item.get("title") or item.get("abstract") or "").split() if w not in _STOP]
        base = f"{_surname(item.get('authors') or [])}{item.get('year') or ''}{words[0] if words else ''}"
        base = re.sub(r"[^a-z0-9]", "", base) or "ref"
        key, n = base, 0
        while key in used:
            n += 1
            key = f"{base}{_suffix(n)}"
        used.add(key)
        keys.append(key)
    return keys


def _suffix(n: int) -> str:
    letters = ""
    while n:
        n, rest = divmod(n - 1, 26)
        letters = chr(97 + rest) + letters
    return letters
