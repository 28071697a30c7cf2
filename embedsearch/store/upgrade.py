"""Format 1 (one folder rewritten whole on every change) to format 2 (segments and generations), in place
and without re-embedding: the data files become the first segment by hard links, BM25 postings are
rebuilt from the stored documents, generation 1 is published, and the root manifest is switched last,
so an interrupted upgrade leaves a format 1 index that opens as before (and can be upgraded again)."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

from .. import lexical as lex
from ..docstore import DocumentStore, ID_HASHES, id_hashes
from ..errors import IndexStoreError
from . import generation as gen
from .files import file_records, fsync_tree, write_json
from .layout import FORMAT_VERSION, GENERATIONS, MANIFEST, SEGMENTS, real_path
from .segment import INFO, entry_of, new_name

V1_FILES = ("documents.jsonl", "documents.offsets.npy", "ids.json", "embeddings.npy", "vectors.faiss",
            "vectors.ivfdata", "metadata.parquet")


def upgrade(path: str | Path) -> int:
    """Convert the format 1 index at ``path``; returns how many documents it holds."""
    import numpy as np

    root = real_path(path)
    try:
        manifest = json.loads((root / MANIFEST).read_text())
    except (OSError, ValueError) as exc:
        raise IndexStoreError(f"{root}: not an embedsearch index (no readable {MANIFEST})") from exc
    if manifest.get("format_version") != 1:
        raise IndexStoreError(f"{root}: index format {manifest.get('format_version')} needs no upgrade")
    for leftover in (root / SEGMENTS, root / GENERATIONS):
        shutil.rmtree(leftover, ignore_errors=True)  # from an earlier, interrupted upgrade
    name = new_name()
    folder = root / SEGMENTS / f".{name}.tmp-upgrade"
    folder.mkdir(parents=True)
    for file in V1_FILES:
        if (root / file).exists():
            os.link(root / file, folder / file)
    documents = list(DocumentStore(folder))
    hashes = id_hashes([d.id for d in documents])
    order = np.argsort(hashes, kind="stable")
    np.save(folder / ID_HASHES, np.stack([hashes[order], order.astype(np.uint64)]))
    settings = lex.LexicalSettings(**manifest.get("lexical", {}))
    lex.build(documents, folder, settings)
    kind = manifest["index"]["type"]
    (folder / INFO).write_text(json.dumps({"name": name, "rows": len(documents), "index_type": kind,
                                           "files": file_records(folder)}, indent=1))
    fsync_tree(folder)
    os.rename(folder, root / SEGMENTS / name)
    gen.publish(root, {"segments": [entry_of(root / SEGMENTS / name)], "corpus_version": 1})
    static = {k: v for k, v in manifest.items() if k not in ("documents", "files", "updated_at")}
    write_json(root / MANIFEST, {**static, "format_version": FORMAT_VERSION, "upgraded_from": 1})
    for file in (*V1_FILES, "lexical"):
        target = root / file
        shutil.rmtree(target) if target.is_dir() else target.unlink(missing_ok=True)
    return len(documents)
