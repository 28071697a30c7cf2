"""Corpus files read into documents: every source checked as it is read, problems reported as
``file:line: what`` so a user can fix the source; with ``skip_invalid`` a bad record is reported and skipped
instead of stopping the read."""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import InputError
from .document import ID_FIELDS, TEXT_FIELDS, TITLE_FIELDS, Document, FieldMap, UniqueIds, check_id
from .kinds import FieldKinds
from .readers import ROWS, Problem, detect_format
from .values import check_unicode, clean_scalar, type_name


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
