"""The segmented index store: immutable segments, deletion files and numbered generations, written by
one writer at a time and read through snapshots (see ``layout`` for the folder)."""

from __future__ import annotations

from ..errors import IndexStoreError
from ..disk.durable import file_records, json_text, staged_folder, write_json
from .layout import (
                     DELETES,
                     EMBEDDINGS,
                     FORMAT_VERSION,
                     GENERATIONS,
                     LOCK,
                     MANIFEST,
                     SEGMENTS,
                     VECTORS,
                     atomic_folder,
                     check_target,
                     default_home,
                     is_index,
                     now,
                     package_version,
                     read_manifest,
                     real_path,
                     size_on_disk,
)

__all__ = ["DELETES", "EMBEDDINGS", "FORMAT_VERSION", "GENERATIONS", "LOCK", "MANIFEST", "SEGMENTS", "VECTORS",
           "IndexStoreError", "atomic_folder", "check_target", "default_home", "file_records", "is_index",
           "json_text", "now", "package_version", "read_manifest", "real_path", "size_on_disk",
           "staged_folder", "write_json"]
