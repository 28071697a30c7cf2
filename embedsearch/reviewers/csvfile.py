"""The CSV files a chair hands the reviewer commands (scores, conflicts, bids, pair limits, attributes, AC
assignments), read one way: a missing column names line 1 and the header expected, an unreadable file the
option that named it, and each line comes with its number so the caller's errors can name it too. A cell the
project's own writer guarded (``disk.csvout``: a leading apostrophe before ``=`` and the like) reads back as it was."""

from __future__ import annotations

import csv
from collections.abc import Iterator, Sequence
from pathlib import Path

from ..disk.csvout import unguarded
from ..errors import InputError


def rows(path: Path, columns: Sequence[str], flag: str, header: str | None = None,
         optional: Sequence[str] = ()) -> Iterator[tuple[int, dict[str, str]]]:
    """Each line's number and its ``columns`` (and ``optional`` ones, '' where absent), stripped."""
    try:
        with path.open(newline="", encoding="utf-8-sig") as fh:
            reader = csv.DictReader(fh)
            missing = [c for c in columns if c not in (reader.fieldnames or [])]
            if missing:
                raise InputError(f"{path}:1: no {', '.join(repr(c) for c in missing)} column; the header is "
                                 f"{header or ','.join(columns)}")
            for line, record in enumerate(reader, start=2):
                yield line, {c: unguarded((record.get(c) or "").strip()) for c in (*columns, *optional)}
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"{flag} {path}: cannot read ({exc})") from None
