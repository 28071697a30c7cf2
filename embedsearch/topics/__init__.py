"""Topic groups and maps: UMAP + HDBSCAN clusters, class-based TF-IDF labels, HTML and PNG maps."""

from .model import Topic, TopicModel, cached, fit
from .settings import TopicSettings

__all__ = ["Topic", "TopicModel", "TopicSettings", "cached", "fit"]
