"""Format 2 to format 3, in place and without re-embedding: every segment's BM25 postings made again with word
forms met (``store.forms``), as new segments holding the same documents, embeddings and deletions
(``repair.rewrite``), committed as one generation under the writer lock; the manifest, which tells queries
how to tokenise, is switched last. Killed before the commit, the index is as it was; in the moment between
the commit and the manifest, queries are tokenised without forms against postings made with them (a
British spelling or irregular plural misses its other form) until ``upgrade`` is run again, which redoes it."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from ..errors import CorruptIndexError
from . import deletes
from . import generation as gen
from .files import FORMAT_VERSION
from .lock import writer
from .manifest import read as read_manifest
from .manifest import write as write_manifest
from .repair import deleted_rows, rewrite


def meet_forms(root: Path) -> int:
    """Re-tokenise the format 2 index at ``root`` (see the module's description); returns its live documents."""
    with writer(root, "upgrade", True):
        manifest = read_manifest(root)  # checked: its seal and keys
        target = replace(manifest, lexical=replace(manifest.lexical, forms=True), format_version=FORMAT_VERSION)
        found = gen.numbers(root)
        if not found:
            raise CorruptIndexError(f"{root}: no generation to upgrade; rebuild the index")
        current = gen.read(root, found[-1])
        entries = list(current.segments)
        for position, entry in enumerate(current.segments):
            rows, _, lost = deleted_rows(root, entry)
            if lost:
                raise CorruptIndexError(f"{lost}; nothing was changed")
            fixed = rewrite(root, target, entry, [e for e in entries if e.name != entry.name])
            if rows is not None:
                fixed = deletes.write_deletes(root, replace(fixed, deletes=None, deleted=0, deletes_sha256=None,
                                                        deleted_rows=None), rows, found[-1] + 1)
            entries[position] = fixed
        gen.publish(root, entries, current.corpus_version)
        write_manifest(root, target)
    return sum(e.rows - e.deleted for e in entries)
