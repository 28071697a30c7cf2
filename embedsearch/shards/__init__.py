"""Shards: one corpus split by id hash into ordinary indexes, searched as one (in process here, or as Ray Serve
deployments in ``serve.cluster``), with answers equal to a single index's."""

from .cluster import Cluster, ShardedAnswer
from .cut import is_cluster, owner
from .shard import Candidate, Shard

__all__ = ["Candidate", "Cluster", "Shard", "ShardedAnswer", "is_cluster", "owner"]
