"""Documents and the readers that turn corpus files into them.

Readers validate as they go and report problems as ``file:line: what`` so a user can fix the
source. With ``skip_invalid`` a bad record is reported and skipped instead of stopping the read.
"""

from __future__ import annotations

import json
import os
import unicodedata
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import IdConflictError, InputError
from .readers import ROWS, Problem, detect_format
from .kinds import FieldKinds
from .values import check_unicode, clean_scalar, type_name

ID_FIELDS = ("id", "_id", "doc_id", "paper_id", "ID")
TEXT_FIELDS = ("text", "abstract", "body", "content")
TITLE_FIELDS = ("title",)


@dataclass(frozen=True)
class Document:
    """One abstract: a stable id, its text, an optional title and scalar metadata from the source."""

    id: str
    text: str
    title: str | None = None
    metadata: dict[str, Any] = field(default_factory=dict, hash=False, compare=True)

    @property
    def embed_text(self) -> str:
        """What the model reads: title and abstract together, as BEIR and MTEB do."""
        return f"{self.title} {self.text}" if self.title else self.text

    def first_sentence(self, limit: int = 160) -> str:
        """A one-line preview for tables when there is no title."""
        text = " ".join(self.text.split())
        for stop in (". ", "? ", "! "):
            cut = text.find(stop)
            if 0 < cut < limit:
                return text[: cut + 1]
        return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"

    def readable(self, keep_math: bool = False) -> Document:
        """This abstract as a reader sees it: LaTeX and Markdown rendered (``corpus.readable``), for display;
        ``keep_math``: ``$...$`` and ``$$...$$`` kept as their source, for a page that typesets them."""
        from .readable import readable

        return Document(self.id, readable(self.text, keep_math) or "", readable(self.title, keep_math), self.metadata)

    def to_record(self) -> dict[str, Any]:
        return {"id": self.id, "title": self.title, "text": self.text, "metadata": self.metadata}

    @classmethod
    def from_record(cls, record: dict[str, Any]) -> Document:
        return cls(record["id"], record["text"], record.get("title"), record.get("metadata") or {})


@dataclass(frozen=True)
class FieldMap:
    """Which source fields hold the id, title and text; ``None`` means detect from common names."""

    id_field: str | None = None
    title_field: str | None = None
    text_field: str | None = None


class UniqueIds:
    """The one check that ids are unique across a corpus however it arrives (a list, batches, files read by
    workers), and that there is a corpus at all."""

    def __init__(self) -> None:
        self.seen: dict[str, str] = {}

    def clash(self, doc_id: str, where: str = "") -> str | None:
        """Where ``doc_id`` was first seen if it was (this one is then not recorded), else None."""
        if doc_id in self.seen:
            return self.seen[doc_id]
        self.seen[doc_id] = where
        return None

    def add(self, doc_id: str, where: str = "") -> None:
        place = f"{where}: " if where else ""
        if not isinstance(doc_id, str):
            raise InputError(f"{place}id {doc_id!r} is {type_name(doc_id)}; a Document's id is text "
                             f"(str({doc_id!r}) for a whole number)")
        try:
            check_id(doc_id)
        except ValueError as exc:
            raise InputError(f"{place}{exc}") from None
        first = self.clash(doc_id, where)
        if first is not None:
            seen = f" (also in {first})" if first else ""
            raise IdConflictError(f"{place}duplicate id {doc_id!r}{seen}; ids must be unique")

    def finish(self, sources: str = "") -> None:
        if not self.seen:
            raise InputError(f"no valid documents in {sources}" if sources else "no documents to index")


def check_unique(documents: Iterable[Document]) -> None:
    ids = UniqueIds()
    for doc in documents:
        ids.add(doc.id)
    ids.finish()


@dataclass
class ReadResult:
    documents: list[Document]
    skipped: list[Problem]


def collection_name(paths: Sequence[str | Path]) -> str:
    """What to call a corpus read from ``paths``: the seed files' shared header line ("NeurIPS 2026 Papers"),
    else the file's name (and how many more)."""
    paths = [Path(p) for p in paths]
    if paths and all(p.suffix == ".txt" for p in paths):
        headers = set()
        for path in paths:
            with path.open(encoding="utf-8", errors="replace") as fh:
                headers.add(fh.readline().strip().removeprefix("\ufeff"))
        if len(headers) == 1 and "" not in headers:
            return headers.pop()[:200]
    if not paths:
        return ""
    return paths[0].stem + (f" and {len(paths) - 1} more" if len(paths) > 1 else "")


def read_sources(paths: Iterable[str | Path], fields: FieldMap = FieldMap(),
                 skip_invalid: bool = False, kinds: FieldKinds | None = None) -> ReadResult:
    """Read every source into documents, rejecting duplicate ids across all of them and values that do not
    fit their field's kind (``kinds``: an index's contract when adding to it)."""
    skipped: list[Problem] = []
    return ReadResult(list(iter_sources(paths, fields, skip_invalid, skipped, kinds)), skipped)


def iter_sources(paths: Iterable[str | Path], fields: FieldMap = FieldMap(), skip_invalid: bool = False,
                 skipped: list[Problem] | None = None, kinds: FieldKinds | None = None) -> Iterator[Document]:
    """Documents of every source, one at a time (a build streams them into segments), with the same checks
    as ``read_sources``; skipped records are appended to ``skipped``. ``kinds`` learns the fields' kinds
    from the records it passes (a fresh contract when none is given)."""
    skipped = [] if skipped is None else skipped
    kinds = FieldKinds() if kinds is None else kinds
    ids = UniqueIds()
    paths = [Path(p) for p in paths]
    for path in paths:
        count = 0
        for where, doc in _read_one(path, fields, skipped, skip_invalid):
            wrong = kinds.admit(doc.metadata, where)
            if wrong:
                _fail(Problem(where, wrong), skipped, skip_invalid)
                continue
            first = ids.clash(doc.id, where)
            if first is not None:
                _fail(Problem(where, f"duplicate id {doc.id!r} (first seen at {first})"), skipped, skip_invalid)
                continue
            count += 1
            yield doc
        if count == 0 and not skip_invalid:
            raise InputError(f"{path}: no documents found; is it empty or in another format?")
    ids.finish(", ".join(str(p) for p in paths))


def _fail(problem: Problem, skipped: list[Problem], skip_invalid: bool) -> None:
    if not skip_invalid:
        raise InputError(f"{problem}; fix it or pass --skip-invalid")
    skipped.append(problem)


def _read_one(path: Path, fields: FieldMap, skipped: list[Problem],
              skip_invalid: bool) -> Iterator[tuple[str, Document]]:
    if path.is_dir():
        raise InputError(f"{path}: is a directory; pass the corpus files inside it")
    if not path.exists():
        if path.is_symlink():
            try:
                path.stat()
            except OSError as exc:
                if exc.errno == 40:  # ELOOP
                    raise InputError(f"{path}: symbolic link loop; point it at a corpus file") from None
            raise InputError(f"{path}: broken symbolic link (to {os.readlink(path)}); point it at a corpus file")
        raise InputError(f"{path}: no such file")
    fmt = detect_format(path)
    rows = ROWS[fmt](path)
    for where, row in rows:
        if isinstance(row, Problem):
            _fail(row, skipped, skip_invalid)
            continue
        try:
            yield where, _to_document(row, fields, default_id=f"{path.stem}:{where.rsplit(':', 1)[1]}")
        except ValueError as exc:
            _fail(Problem(where, str(exc)), skipped, skip_invalid)


def _pick(row: dict[str, Any], wanted: str | None, candidates: tuple[str, ...], what: str) -> str | None:
    if wanted is not None:
        if wanted not in row:
            raise ValueError(f"missing {what} field {wanted!r}")
        return wanted
    return next((name for name in candidates if name in row), None)


def _to_document(row: dict[str, Any], fields: FieldMap, default_id: str) -> Document:
    text_key = _pick(row, fields.text_field, TEXT_FIELDS, "text")
    if text_key is None:
        raise ValueError(f"no text field (looked for {', '.join(TEXT_FIELDS)}); name it with --text-field")
    text = row[text_key]
    if text is not None and not isinstance(text, str):
        raise ValueError(f"field {text_key!r} holds {type_name(text)}, not text; put the abstract there as a string")
    if text is None or not text.strip():
        raise ValueError(f"empty text in field {text_key!r}")
    id_key = _pick(row, fields.id_field, ID_FIELDS, "id")
    doc_id = default_id if id_key is None else check_id(row[id_key], id_key)
    for key, value in row.items():
        check_unicode(key, key)
        check_unicode(value, key)
    title_key = _pick(row, fields.title_field, TITLE_FIELDS, "title")
    title = clean_scalar(row.get(title_key)) if title_key else None
    title = " ".join(str(title).split()) or None if title is not None else None
    used = {text_key, id_key, title_key}
    metadata = {k: clean_scalar(v) for k, v in row.items() if k not in used}
    return Document(doc_id, text.strip(), title, metadata)


def check_id(value: Any, field: str = "id") -> str:
    """An id as an index keeps it: text exactly as given, or a whole number as its decimal text. Anything
    else (a list, an object, a boolean, a decimal number), an empty id, spaces around it or a control
    character is a ValueError naming ``field``. The one rule for build, add, remove, the API and readers."""
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    if value is None:
        raise ValueError(f"empty id in field {field!r}")
    if not isinstance(value, str):
        shown = json.dumps(value, ensure_ascii=False, default=str)[:60]
        what = {float: "a decimal number", bool: "a boolean", dict: "an object", list: "a list"}.get(
            type(value), type_name(value).split(" (")[0])
        raise ValueError(f"id {shown} in field {field!r} is {what}; an id is text or a whole number")
    if not value.strip():
        raise ValueError(f"empty id in field {field!r}")
    if any(unicodedata.category(ch) in ("Cc", "Zl", "Zp") for ch in value.strip()):
        raise ValueError(f"id {value!r} in field {field!r} holds a line break or control character")
    if value != value.strip():
        raise ValueError(f"id {value!r} in field {field!r} has spaces around it; ids are kept exactly as given, "
                         "so remove them")
    return value


def parse_record(row: dict[str, Any], where: str, default_id: str = "") -> Document:
    """One record as a file's records are read (id, title and text fields found by name, the rest kept as
    metadata), or an ``InputError`` naming ``where``: for records that arrive outside a file (an API body)."""
    try:
        return _to_document(row, FieldMap(), default_id)
    except ValueError as exc:
        raise InputError(f"{where}: {exc}") from None


def bundled_sources() -> list[Path]:
    """The NeurIPS 2026 abstracts shipped as package data."""
    from importlib.resources import files

    return sorted(Path(str(p)) for p in files("embedsearch").joinpath("data").iterdir() if p.name.endswith(".txt"))
