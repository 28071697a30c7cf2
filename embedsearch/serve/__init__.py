"""``embedsearch serve``: a FastAPI service and web page over one index, following its newest generation.
Needs the ``serve`` extra (``pip install 'embedsearch[serve]'``); importing this package does not."""

from .settings import LIMITS, Limits, ServeSettings


def __getattr__(name: str):
    if name == "create_app":
        from ..errors import require

        require("fastapi", "serve")
        from .app import create_app

        return create_app
    raise AttributeError(name)


__all__ = ["LIMITS", "Limits", "ServeSettings", "create_app"]
