"""Topic groups and maps: UMAP + HDBSCAN clusters, class-based TF-IDF labels, HTML and PNG maps. Names are
imported on first use, so that reading ``topics.settings`` (as every command's options do) loads no fit."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .model import fit
    from .results import Topic, TopicModel
    from .saved import cached
    from .settings import TopicSettings

_FROM = {"Topic": "results", "TopicModel": "results", "cached": "saved", "fit": "model", "TopicSettings": "settings"}


def __getattr__(name: str):
    if name not in _FROM:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from importlib import import_module

    return getattr(import_module(f".{_FROM[name]}", __name__), name)


__all__ = ["Topic", "TopicModel", "TopicSettings", "cached", "fit"]
