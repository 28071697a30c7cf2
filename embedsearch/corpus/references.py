"""What the reference-manager formats share: one record shape (``id``, ``title``, ``abstract``, ``authors``,
``year``, ``doi``, ``eprint``, ``venue``), the keys a library entry is matched by (DOI, arXiv id, a title
with case, accents, LaTeX markup and braces removed), LaTeX in and out, and citation keys."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Sequence
from typing import Any

FIELDS = ("id", "title", "abstract", "authors", "year", "doi", "eprint", "category", "venue", "index_id")
_STOP = {"a", "an", "the", "on", "of", "for", "and", "to", "in", "with", "towards", "toward", "from", "via", "is"}
_INDEX_ID = re.compile(r"embedsearch id: (.+)$")
_DOI = re.compile(r"10\.\d{4,9}/\S+", re.IGNORECASE)
_ARXIV = re.compile(r"(?:arxiv[:/]|abs/|^)(\d{4}\.\d{4,5}|[a-z\-]+(?:\.[A-Z]{2})?/\d{7})(?:v\d+)?", re.IGNORECASE)
_COMMAND = re.compile(r"\\(?:[A-Za-z]+|['\"`^~=.])")
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
    """Text as BibTeX holds it: text that is LaTeX already (arXiv's titles and abstracts: accents, font
    commands, math) as written; plain text with LaTeX's special characters escaped outside math."""
    if is_latex(text):
        return text
    parts = _MATH.split(text)
    return "".join(p if i % 2 else "".join(_SPECIAL.get(ch, ch) for ch in p) for i, p in enumerate(parts))


def is_latex(text: str) -> bool:
    """Whether ``text`` is written in LaTeX: it holds a command or an accent (``\\it``, ``\\'e``) and its braces
    and dollars pair up (a lone ``{`` or ``$`` in plain text is escaped instead)."""
    if not _COMMAND.search(text) or text.count("$") % 2:
        return False
    depth = 0
    for ch in re.sub(r"\\[{}]", "", text):
        depth += {"{": 1, "}": -1}.get(ch, 0)
        if depth < 0:
            return False
    return depth == 0


def plain_text(text: str | None) -> str | None:
    """Text as a plain-text format (RIS, CSL-JSON) holds it: LaTeX decoded to Unicode (``M\\'enage`` is
    ``Ménage``), math kept as ``$...$``; plain text as it is."""
    return from_latex(text) if text and is_latex(text) else text


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


def arxiv_doi(eprint: str) -> str:
    """The DOI arXiv gives every paper (DataCite), as its own BibTeX export names it."""
    return f"10.48550/arXiv.{eprint}"


def arxiv_year(identifier: str) -> int | None:
    """The year an arXiv id was issued in: ``0704.1269`` (``YYMM.NNNN``, from April 2007) or ``hep-th/9901001``."""
    found = re.fullmatch(r"(\d\d)(\d\d)\.\d{4,5}|[a-z\-]+(?:\.[a-z]{2})?/(\d\d)(\d\d)\d{3}", identifier or "")
    if not found:
        return None
    year, month = (found.group(1), found.group(2)) if found.group(1) else (found.group(3), found.group(4))
    if not 1 <= int(month) <= 12:
        return None
    return 2000 + int(year) if int(year) < 91 else 1900 + int(year)


def record(**values: Any) -> dict[str, Any]:
    """A record with the shared fields that have a value (empty strings and lists dropped)."""
    return {k: v for k, v in values.items() if k in FIELDS and v not in (None, "", [], ())}


def _surname(authors: Sequence[str]) -> str:
    """The first author's family name, folded (``Last, First`` and ``First Last`` alike); '' without authors."""
    if not authors:
        return ""
    name = authors[0].partition(",")[0] if "," in authors[0] else (authors[0].split() or [""])[-1]
    return normal_title(name).replace(" ", "")


def citation_keys(records: Iterable[dict[str, Any]]) -> list[str]:
    """``author year firstword`` keys (``vaswani2017attention``), made unique with a, b, ... in order; a paper
    without authors takes its title's first word in their place (``cosmic2007menage``), never ``anon``."""
    used: set[str] = set()
    keys = []
    for item in records:
        words = [w for w in normal_title(item.get("title") or item.get("abstract") or "").split() if w not in _STOP]
        who = _surname(item.get("authors") or []) or (words.pop(0) if words else "")
        base = f"{who}{item.get('year') or ''}{words[0] if words else ''}"
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
