"""A progress line for an assignment's long steps (tqdm, on stderr), so that a chair never watches a silent
terminal: each solve says what it is when it starts and how long the run has taken. OR-Tools' min-cost flow
holds the interpreter while it runs, so its line moves between solves; CP-SAT lets go, so it runs in a
thread while the line ticks with its best solution and bound, and Ctrl-C stops it at once."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import TypeVar

from tqdm import tqdm

SHOWN_FROM = 100_000  # candidate pairs from which a solve takes seconds on a small machine

T = TypeVar("T")
_line: ContextVar[Line | None] = ContextVar("embedsearch_assign_progress", default=None)


class Line:
    """One tqdm line: the step running now, the time since the assignment started, a note."""

    def __init__(self) -> None:
        self.steps = 0
        self.bar = tqdm(total=None, bar_format="{desc} [{elapsed}]{postfix}", leave=False)

    def step(self, what: str) -> None:
        self.steps += 1
        self.bar.set_postfix_str("", refresh=False)
        self.bar.set_description_str(f"assign, step {self.steps}: {what}", refresh=True)

    def note(self, text: str) -> None:
        self.bar.set_postfix_str(text, refresh=True)


@contextmanager
def shown(enabled: bool) -> Iterator[None]:
    """Steps inside report on one line when ``enabled`` (and nowhere otherwise)."""
    if not enabled:
        yield
        return
    line = Line()
    token = _line.set(line)
    try:
        yield
    finally:
        _line.reset(token)
        line.bar.close()


def step(what: str) -> None:
    """Say which solve starts now, where a line is shown."""
    line = _line.get()
    if line is not None:
        line.step(what)


def noter() -> Callable[[str], None]:
    """A function that sets the note of the line shown now; usable from any thread (a solver's callback)."""
    line = _line.get()
    return line.note if line is not None else (lambda text: None)


class Interrupted(KeyboardInterrupt):
    """Ctrl-C ended a solver that ran in threads of its own. ``end_at_once``: the process should end without
    the interpreter's finalisation, which then aborts (SIGABRT) about half the time here with CP-SAT 9.10."""

    end_at_once = True


def wait(work: Callable[[], T], stop: Callable[[], None]) -> T:
    """``work()`` (a solver that releases the interpreter) in a thread, this one refreshing the line every
    second; on Ctrl-C, ``stop()`` ends the solver and the interrupt goes on."""
    result: list = []
    failure: list[BaseException] = []

    def run() -> None:
        try:
            result.append(work())
        except BaseException as exc:  # handed to the waiting thread
            failure.append(exc)

    line = _line.get()
    worker = threading.Thread(target=run, daemon=True)
    worker.start()
    try:
        while worker.is_alive():
            worker.join(timeout=1.0)
            if line is not None:
                line.bar.refresh()
    except KeyboardInterrupt:
        stop()
        worker.join()
        raise Interrupted() from None
    if failure:
        raise failure[0]
    return result[0]
