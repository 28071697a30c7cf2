"""The writer lock: one writer commits to an index at a time.

``filelock`` takes an OS lock (``fcntl.flock``) on ``.lock``; the kernel releases it when the holder
exits or is killed, so a dead writer never leaves the index locked. Who holds it (pid, host, since when,
what for) is written beside it, for the waiting writer's message and to notice a holder that died."""

from __future__ import annotations

import json
import logging
import os
import socket
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from ..errors import IndexLockedError
from .shard_marker import refuse_shard
from .files import LOCK, now

log = logging.getLogger(__name__)

OWNER = ".lock.owner"


def _owner(root: Path) -> dict:
    try:
        return json.loads((root / OWNER).read_text())
    except (OSError, ValueError):
        return {}


def _describe(owner: dict) -> str:
    if not owner:
        return "another writer"
    return f"pid {owner.get('pid')} on {owner.get('host')} ({owner.get('action', 'a write')} since {owner.get('since')})"


@contextmanager
def writer(root: Path, action: str, wait: bool | float = True, timeout: float | None = None,
           notify: Callable[[str], None] = log.info) -> Iterator[None]:
    """Hold the index's writer lock for the block; wait for another writer (saying so through ``notify``),
    with ``wait=False`` fail at once naming the holder, with a number wait at most that many seconds."""
    from filelock import FileLock, Timeout

    refuse_shard(root)
    if not isinstance(wait, bool):
        wait, timeout = True, float(wait)

    lock = FileLock(str(root / LOCK))
    try:
        lock.acquire(timeout=0)
    except Timeout:
        holder = _describe(_owner(root))
        if not wait:
            raise IndexLockedError(f"{root} is being written by {holder}; try again later, or leave out --no-wait "
                                   "to wait for it") from None
        notify(f"waiting for {holder} to finish writing {root} ...")
        try:
            lock.acquire(timeout=-1 if timeout is None else timeout)
        except Timeout:
            raise IndexLockedError(f"{root} is still being written by {holder} after {timeout:.0f} s; "
                                   "try again later") from None
    try:
        previous = _owner(root)
        if previous and previous.get("host") == socket.gethostname() and not _alive(previous.get("pid")):
            notify(f"note: the previous writer ({_describe(previous)}) died; its unfinished files are ignored")
        (root / OWNER).write_text(json.dumps({"pid": os.getpid(), "host": socket.gethostname(), "since": now(),
                                              "action": action}))
        yield
    finally:
        (root / OWNER).unlink(missing_ok=True)
        lock.release()


def _alive(pid) -> bool:
    try:
        os.kill(int(pid), 0)
    except (OSError, TypeError, ValueError):
        return False
    return True
