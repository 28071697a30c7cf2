"""Recommendations from seed papers: papers a reader likes (ids in the index, or a library's entries, matched
or embedded) and papers they do not, turned into one direction (``model.direction``) searched in the vector
index of an index or a cluster alike (``Fanout.nearest_to``). Seeds are never returned; each hit names the
seeds it is closest to."""

from .model import Recommendations, Seeds, direction, recommend
from .settings import RecommendSettings

__all__ = ["RecommendSettings", "Recommendations", "Seeds", "direction", "recommend"]
