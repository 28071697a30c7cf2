"""Topic groups and maps: UMAP + HDBSCAN clusters, class-based TF-IDF labels, HTML and PNG maps."""

from .umap_hdbscan import TopicSettings
from .model import Topic, TopicModel, cached, fit

__all__ = ["Topic", "TopicModel", "TopicSettings", "cached", "fit"]
