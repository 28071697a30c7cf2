"""The browser code: the search page (``page/``), the topic map (``map/``), the modules both use
(``shared/``), page templates and the vendored libraries (``vendor/``, built from ``vendor/npm``)."""

from .assets import FOLDER, SERVED, inline_imports, served_imports, shipped, text

__all__ = ["FOLDER", "SERVED", "inline_imports", "served_imports", "shipped", "text"]
