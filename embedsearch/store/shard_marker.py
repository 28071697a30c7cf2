"""Which index folders a write may touch: a shard of a cluster only through its cluster. A direct write
would not be routed by id or named in a cut, and after the grace period the shard's clean-up would delete
the generation the cluster's newest cut names. ``Index.split`` marks each shard (``shard.json``); the
cluster writes inside ``through_cluster``; every writer lock and every build over a folder checks."""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from pathlib import Path

from ..errors import InputError

SHARD = "shard.json"
_THROUGH_CLUSTER: ContextVar[bool] = ContextVar("embedsearch_through_cluster", default=False)


@contextmanager
def through_cluster() -> Iterator[None]:
    """Writes in this block (this thread or task) may touch shard folders: the cluster routes and cuts them."""
    token = _THROUGH_CLUSTER.set(True)
    try:
        yield
    finally:
        _THROUGH_CLUSTER.reset(token)


def mark(root: Path, cluster: Path) -> None:
    (Path(root) / SHARD).write_text(json.dumps({"cluster": str(Path(cluster).resolve()), "shard": Path(root).name}))


def refuse_shard(root: Path) -> None:
    """An error naming the cluster when ``root`` is a marked shard written outside ``through_cluster``."""
    marker = Path(root) / SHARD
    if _THROUGH_CLUSTER.get() or not marker.is_file():
        return
    try:
        cluster = json.loads(marker.read_text()).get("cluster", "its cluster")
    except (OSError, ValueError, AttributeError):
        cluster = "its cluster"
    raise InputError(f"{root} is {Path(root).name} of the cluster {cluster}; write through the cluster "
                     f"(--index {cluster}, or Index.load(cluster).add/remove/compact)")
