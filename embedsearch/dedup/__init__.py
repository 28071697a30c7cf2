"""Near-duplicate detection: candidates from the vector index, lexical evidence, verdicts, groups. Names are
imported on first use, so that reading ``dedup.settings`` (as the CLI's options do) loads no search."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .judging import (ON_DUPLICATE, OnDuplicate, append_checked, decide, find_duplicates, find_duplicates_against,
                          judge, screen)
    from .report import Candidate, DuplicateGroup, DuplicatePair, DuplicateReport
    from .settings import DedupSettings

_FROM = {**dict.fromkeys(["ON_DUPLICATE", "OnDuplicate", "append_checked", "decide", "find_duplicates",
                          "find_duplicates_against", "judge", "screen"], "judging"),
         **dict.fromkeys(["Candidate", "DuplicateGroup", "DuplicatePair", "DuplicateReport"], "report"),
         "DedupSettings": "settings"}


def __getattr__(name: str):
    if name not in _FROM:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from importlib import import_module

    return getattr(import_module(f".{_FROM[name]}", __name__), name)


__all__ = ["Candidate", "DedupSettings", "DuplicateGroup", "DuplicatePair", "DuplicateReport", "ON_DUPLICATE",
           "OnDuplicate", "append_checked", "decide", "find_duplicates", "find_duplicates_against", "judge", "screen"]
