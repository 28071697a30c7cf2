"""The browser code's files (this folder: the search page, the map, their shared modules, the vendored
libraries) and the import maps that load them: one module per file, each importing the others by a bare name
(``embedsearch/map/labels.js``). Served, the names map to ``/static/``; a standalone map (one file opened
from disk, where a module cannot fetch another) carries its modules in its import map as ``data:`` URLs."""

from __future__ import annotations

import base64
import json
from functools import lru_cache
from pathlib import Path

FOLDER = Path(__file__).parent
SERVED = {".js": "text/javascript", ".mjs": "text/javascript", ".css": "text/css", ".html": "text/html",
          ".woff2": "font/woff2"}
_KEPT = ("npm",)  # the vendored code's build recipe: not served, not shipped


def text(name: str) -> str:
    """A file of this folder, by its path under it (``map/map_page.html``)."""
    return (FOLDER / name).read_text(encoding="utf-8")


@lru_cache(maxsize=1)
def shipped() -> frozenset[str]:
    """Every file the service may send, by its path under this folder: only these names are ever opened."""
    return frozenset(p.relative_to(FOLDER).as_posix() for p in FOLDER.rglob("*")
                     if p.is_file() and p.suffix in SERVED and not set(p.relative_to(FOLDER).parts) & set(_KEPT))


def served_imports(prefix: str = "/static/") -> str:
    """The import map of a page the service sends: every module by its path under ``prefix``."""
    return json.dumps({"imports": {"embedsearch/": prefix}})


def inline_imports(*folders: str, vendored: tuple[str, ...] = ()) -> str:
    """The import map of a standalone page: every module of ``folders`` and the ``vendored`` files, each as
    a ``data:`` URL, safe inside a ``<script>`` element."""
    files = [p for folder in folders for p in sorted((FOLDER / folder).glob("*.js"))]
    files += [FOLDER / "vendor" / name for name in vendored]
    imports = {f"embedsearch/{p.relative_to(FOLDER).as_posix()}":
               "data:text/javascript;base64," + base64.b64encode(p.read_bytes()).decode("ascii") for p in files}
    return json.dumps({"imports": imports})
