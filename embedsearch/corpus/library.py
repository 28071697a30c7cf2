"""A reader's own library as records: BibTeX, RIS, CSL-JSON or Zotero's CSV export, chosen by the file's
suffix (and, for ``.json`` and ``.csv``, by what it holds). Broken entries come back as ``Problem`` lines
naming the file and line, beside the entries that were read."""

from __future__ import annotations

import io
from dataclasses import dataclass
from pathlib import Path, PurePath
from typing import Any

from ..errors import InputError
from .document import Problem

KINDS = ".bib (BibTeX), .ris (RIS), .json (CSL-JSON) or .csv (Zotero's CSV export)"
SUFFIX = {"bibtex": ".bib", "ris": ".ris", "csl-json": ".json", "zotero-csv": ".csv"}


@dataclass(frozen=True)
class LibraryText:
    """A library sent as text (the service's ``POST /recommend``), read by the file readers as if it were the
    file ``library.SUFFIX`` (errors name that file and a line): nothing is written to disk."""

    kind: str
    text: str

    @property
    def path(self) -> PurePath:
        return PurePath(f"library{SUFFIX[self.kind]}")

    @property
    def suffix(self) -> str:
        return self.path.suffix

    @property
    def stem(self) -> str:
        return self.path.stem

    def __str__(self) -> str:
        return str(self.path)

    def is_file(self) -> bool:
        return True

    def read_text(self, encoding: str = "utf-8") -> str:
        return self.text

    def open(self, mode: str = "r", newline: str | None = None, encoding: str = "utf-8", errors: str = "strict"):
        return io.StringIO(self.text, newline=newline)


def read_library(path: Path | LibraryText) -> list[tuple[str, dict[str, Any] | Problem]]:
    """Each entry of a library file (or of a ``LibraryText``) as a record, or a ``Problem`` naming its line."""
    if not path.is_file():
        raise InputError(f"--library {path}: no such file")
    suffix = path.suffix.lower()
    if suffix == ".bib":
        from .bibtex import rows
    elif suffix == ".ris":
        from .ris import rows
    elif suffix == ".json":
        from .csl import rows
    elif suffix == ".csv":
        rows = _zotero(path)
    else:
        raise InputError(f"--library {path}: unknown kind {path.suffix!r}; give {KINDS}")
    return list(rows(path))


def _zotero(path: Path):
    from .csl import zotero_rows

    with path.open(encoding="utf-8-sig", errors="replace") as fh:
        header = fh.readline()
    if "Title" not in header or ("Key" not in header and "Item Type" not in header):
        raise InputError(f"--library {path}: a CSV library is Zotero's export (columns Key, Item Type, Title, "
                         "Author, Abstract Note, ...); this one's header has none of them")
    return zotero_rows


def text_of(entry: dict[str, Any]) -> str:
    """What an unmatched entry is embedded from: its title and abstract, or its title alone."""
    return " ".join(p for p in (entry.get("title"), entry.get("abstract")) if p)
