"""Files a command writes for its user (pair reports, deduplicated corpora, maps): one guard and one
write for all of them. An output never lands inside an index folder, never on a file an index was built
from, and never over an existing file unless asked (``force``); it is written under a temporary name and
renamed, so a failed run leaves any old file as it was."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

from ..errors import InputError
from ..store.files import is_index


def check_output(path: str | Path, option: str, sources: Sequence[str | Path] = (), force: bool = False) -> Path:
    """The real path an output may be written to, checked before any work is done; ``sources`` are the
    files the indexes in use came from (``Index.sources``: their builds' and every ``add``'s)."""
    given = Path(path)
    real = Path(os.path.realpath(given.expanduser()))
    if real.is_dir():
        raise InputError(f"{option} {given} is a folder; name a file to write")
    if not real.parent.is_dir():
        raise InputError(f"{option} {given}: folder {given.parent} does not exist; create it first")
    for folder in (real.parent, *real.parent.parents):
        if is_index(folder):
            raise InputError(f"{option} {given} is inside the index folder {folder}; write it somewhere else")
    if any(Path(os.path.realpath(s)) == real for s in sources):
        raise InputError(f"{option} {given} is a file an index was built from or read by `add`; name another file")
    if real.exists() and not force:
        raise InputError(f"{option} {given} already exists; name a new file, or pass --force to replace it")
    return real
