"""An answer as a reference-manager file (``format=bibtex|ris|csl-json`` on ``/search``, ``/similar`` and
``/recommend``), written by the same code as the CLI's ``--bibtex``, ``--ris`` and ``--csl-json``."""

from __future__ import annotations

from fastapi.responses import Response

from ..corpus.export import MEDIA, paper_record, render

SUFFIX = {"bibtex": ".bib", "ris": ".ris", "csl-json": ".json"}
EXPORTS = {200: {"content": {media: {"schema": {"type": "array", "items": {"type": "object"}} if kind == "csl-json"
                                       else {"type": "string"}} for kind, media in MEDIA.items()},
                 "description": "The hits, or with `format` a reference-manager file."}}


def exported(kind: str, hits) -> Response:
    """The hits as a reference-manager file, named for a download."""
    text = render(kind, [paper_record(h.id, h.title, h.text, h.metadata) for h in hits])
    return Response(text, media_type=MEDIA[kind],
                    headers={"Content-Disposition": f'attachment; filename="embedsearch{SUFFIX[kind]}"'})
