"""A document (one abstract: id, text, title, metadata), the source fields it is read from, the one
check that ids are valid and unique across a corpus however it arrives, and a record a reader could not use,
named by where it is (``file:line``)."""

from __future__ import annotations

import json
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from ..errors import IdConflictError, InputError
from .values import type_name

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


@dataclass(frozen=True)
class Problem:
    """A record that was skipped, and why."""

    where: str
    message: str

    def __str__(self) -> str:
        return f"{self.where}: {self.message}"
