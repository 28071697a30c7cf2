"""Saved searches that list new papers: ``add`` keeps a watch with the index, ``run`` lists what arrived since
it last ran (``runs``); ``feed`` writes a run as an Atom feed."""

from .runs import Watch, WatchRun, add, listed, remove, run

__all__ = ["Watch", "WatchRun", "add", "listed", "remove", "run"]
