"""The checks of the facade (``Index`` inherits them): what is wrong with an index on disk, what it holds that is
safe to lose, and its repair (``store.repair``: derived files made again and committed; saved topics that are
damaged removed, to be fitted again)."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import TYPE_CHECKING

from ..store.files import real_path
from ..store.repair import Repair

if TYPE_CHECKING:
    from ..store.folders import ClusterFolder, IndexFolder


class Checks:
    """Verification and repair; the class using it provides ``path``, ``folder`` and ``generation``."""

    path: Path
    folder: IndexFolder | ClusterFolder
    generation: int

    def check(self, deep: bool = False) -> list[str]:
        """What is wrong with this generation on disk, one line each (empty when healthy); ``deep`` re-hashes
        every file against the checksums recorded when it was written, and walks the folder for files no
        record owns."""
        from ..topics.saved import problems as topic_problems

        found = self.folder.problems(self.generation, deep)
        return list(dict.fromkeys(found + (topic_problems(self.path) if deep else [])))

    def expendable(self) -> list[str]:
        """What the folder holds that is safe to lose (nothing reads it, ``check`` verifies none of it), by kind:
        superseded generations and what only they name, the writer lock, leftovers of interrupted writes."""
        return self.folder.expendable(self.generation)

    @classmethod
    def repair(cls, path: str | Path, wait: bool | float = True) -> Repair:
        """Make again every derived file of the index (or of each shard of the cluster) at ``path`` that is
        damaged or missing, commit it as a new version, remove damaged saved topics; what cannot be made again
        is in ``cannot``. Opens nothing but the manifest first: a damaged generation pointer is repaired too."""
        from ..ingest.manifest import load_manifest
        from ..store.folders import open_folder
        from ..topics.saved import damaged as damaged_topics

        root = real_path(path)
        done = open_folder(root, load_manifest).repair(wait)
        removed = []
        for folder in damaged_topics(root):
            shutil.rmtree(folder, ignore_errors=True)
            removed.append(f"{folder}: damaged topic results removed; the next `embedsearch topics` fits them again")
        return Repair(done.repaired + tuple(removed), done.cannot, done.generation)
