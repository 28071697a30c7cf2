"""The segmented index store: immutable segments, deletion files and numbered generations, written by
one writer at a time and read through snapshots (see ``layout`` for the folder)."""

from __future__ import annotations

import json
from typing import Any

from ..errors import IndexStoreError
from .files import file_records, staged_folder, write_json
from .layout import (DELETES, EMBEDDINGS, FORMAT_VERSION, GENERATIONS, LOCK, MANIFEST, SEGMENTS, VECTORS,
                     atomic_folder, check_target, default_home, is_index, new_manifest, now, package_version,
                     read_manifest, real_path, size_on_disk)


def json_text(payload: Any) -> str:
    return json.dumps(payload, indent=2, ensure_ascii=False) + "\n"


__all__ = ["DELETES", "EMBEDDINGS", "FORMAT_VERSION", "GENERATIONS", "LOCK", "MANIFEST", "SEGMENTS", "VECTORS",
           "IndexStoreError", "atomic_folder", "check_target", "default_home", "file_records", "is_index",
           "json_text", "new_manifest", "now", "package_version", "read_manifest", "real_path", "size_on_disk",
           "staged_folder", "write_json"]
