"""What a cluster on Ray Serve reserves (serve/ray_fit.py): one CPU a replica where the Ray cluster has them,
an equal share where it has fewer, and a request that cannot fit refused with the numbers."""

import pytest

from embedsearch.errors import ServiceError
from embedsearch.serve.ray_fit import reserve


def test_one_cpu_each_when_they_fit():
    fitted = reserve(shards=2, replicas=2, cpus=None, available=16)
    assert (fitted.cpus, fitted.replicas, fitted.note) == (1.0, 5, "")


def test_an_equal_share_when_they_do_not_and_it_is_said():
    fitted = reserve(shards=2, replicas=2, cpus=None, available=2)
    assert fitted.cpus == 0.4 and fitted.replicas * fitted.cpus <= 2
    assert "Ray has 2 CPUs" in fitted.note and "0.4 CPU" in fitted.note
    assert reserve(shards=3, replicas=2, cpus=None, available=2).cpus == 0.28  # 7 replicas, rounded down


def test_an_explicit_reservation_that_does_not_fit_is_refused_with_the_numbers():
    with pytest.raises(ServiceError, match=r"need 5 CPUs and the Ray cluster has 2: pass --cpus 0.4 or less"):
        reserve(shards=2, replicas=2, cpus=1.0, available=2)
    assert reserve(shards=2, replicas=2, cpus=0.4, available=2).cpus == 0.4


def test_too_many_replicas_for_any_share():
    with pytest.raises(ServiceError, match="fewer --replicas"):
        reserve(shards=100, replicas=3, cpus=None, available=2)
