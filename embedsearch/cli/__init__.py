"""The ``embedsearch`` command: parse arguments, call the ``Index`` facade, render results.

Tables go to stdout, progress and errors to stderr; ``--json`` prints machine-readable output.
Heavy libraries load inside the commands that need them so that ``search`` starts fast.
"""

from .app import app
from .command import main

__all__ = ["app", "main"]
