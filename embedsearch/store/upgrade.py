"""Format 1 (one folder rewritten whole on every change) to the current format (segments and generations),
in place and without re-embedding (format 2 to 3: ``forms_upgrade``): the data files become the first segment by hard links, BM25 postings are
rebuilt from the stored documents, generation 1 is published, and the root manifest is switched last,
so an interrupted upgrade leaves a format 1 index that opens as before (and can be upgraded again)."""

from __future__ import annotations

import json
import os
import shutil
from dataclasses import asdict
from pathlib import Path

from ..errors import CorruptIndexError, EmbedsearchError, IndexStoreError
from ..disk.durable import file_records, fsync_tree
from . import generation as gen
from . import lexical as lex
from .docstore import ID_HASHES, DocumentStore, id_hashes
from .files import FORMAT_VERSION, GENERATIONS, MANIFEST, SEGMENTS, real_path
from .manifest import Manifest
from .manifest import write as write_manifest
from .segment import INFO, entry_of, new_name
from .settings import LexicalSettings

V1_FILES = ("documents.jsonl", "documents.offsets.npy", "ids.json", "embeddings.npy", "vectors.faiss",
            "vectors.ivfdata", "metadata.parquet")


def _undo(root: Path) -> None:
    for leftover in (root / SEGMENTS, root / GENERATIONS):
        shutil.rmtree(leftover, ignore_errors=True)


def _verify(folder: Path, manifest: dict, documents: int) -> None:
    """The converted files agree with each other and with the format 1 manifest before anything is published
    (a truncated embeddings.npy used to upgrade "successfully" and fail every check after)."""
    import numpy as np

    recorded = manifest.get("documents")
    if recorded is not None and recorded != documents:
        raise CorruptIndexError(f"{folder / 'documents.jsonl'}: {documents} documents, the manifest records {recorded}")
    try:
        rows = np.load(folder / "embeddings.npy", mmap_mode="r").shape[0]
    except (OSError, ValueError) as exc:
        raise CorruptIndexError(f"{folder / 'embeddings.npy'}: unreadable ({exc})") from None
    if rows != documents:
        raise CorruptIndexError(f"{folder / 'embeddings.npy'}: {rows} vectors for {documents} documents")


def upgrade(path: str | Path) -> int:
    """Convert the format 1 index at ``path``; returns how many documents it holds."""
    import numpy as np

    root = real_path(path)
    try:
        manifest = json.loads((root / MANIFEST).read_text())
    except (OSError, ValueError) as exc:
        raise IndexStoreError(f"{root}: not an embedsearch index (no readable {MANIFEST})") from exc
    if manifest.get("format_version") == 2:
        from .forms_upgrade import meet_forms

        return meet_forms(root)
    if manifest.get("format_version") != 1:
        raise IndexStoreError(f"{root}: index format {manifest.get('format_version')} needs no upgrade")
    _undo(root)  # what an earlier, interrupted upgrade left
    name = new_name()
    folder = root / SEGMENTS / f".{name}.tmp-upgrade"
    try:
        folder.mkdir(parents=True)
        for file in V1_FILES:
            if (root / file).exists():
                os.link(root / file, folder / file)
        documents = list(DocumentStore(folder))
        _verify(folder, manifest, len(documents))
        hashes = id_hashes([d.id for d in documents])
        order = np.argsort(hashes, kind="stable")
        np.save(folder / ID_HASHES, np.stack([hashes[order], order.astype(np.uint64)]))
        settings = LexicalSettings(**manifest.get("lexical", {}))
        lex.build(documents, folder, settings)
        kind = manifest["index"]["type"]
        (folder / INFO).write_text(json.dumps({"name": name, "rows": len(documents), "index_type": kind,
                                               "files": file_records(folder)}, indent=1))
        fsync_tree(folder)
        os.rename(folder, root / SEGMENTS / name)
        gen.publish(root, [entry_of(root / SEGMENTS / name)], 1)
    except (EmbedsearchError, OSError, ValueError, KeyError) as exc:
        _undo(root)
        message = str(exc).splitlines()[0].replace(str(folder), str(root))
        raise CorruptIndexError(f"{message}; the upgrade was undone and the format 1 index left as it was "
                                "(restore the damaged file, or rebuild)") from None
    static = {k: v for k, v in manifest.items() if k not in ("documents", "files", "updated_at")}
    write_manifest(root, Manifest.parse(root / MANIFEST, {**static, "lexical": asdict(settings),
                                                          "format_version": FORMAT_VERSION, "upgraded_from": 1}))
    for file in (*V1_FILES, "lexical"):
        target = root / file
        shutil.rmtree(target) if target.is_dir() else target.unlink(missing_ok=True)
    return len(documents)
