"""The ``embedsearch`` command: parse arguments, call the ``Index`` facade, render results.

Tables go to stdout, progress and errors to stderr; ``--json`` prints machine-readable output.
Heavy libraries load inside the commands that need them so that ``search`` starts fast.
"""

from . import search, manage, explore  # noqa: F401, I001  (registers the commands, in help order)
from .app import app


def main() -> None:
    app(prog_name="embedsearch")


__all__ = ["app", "main"]
