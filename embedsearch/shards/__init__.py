"""A shard's side of a sharded search over Ray Serve (``serve.cluster``): plain-data calls a remote
caller can send and receive, merged by the ingress into one index's answer."""

from ..store.cuts import is_cluster, owner
from .shard import Candidate, Shard

__all__ = ["Candidate", "Shard", "is_cluster", "owner"]
