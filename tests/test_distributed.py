"""The Ray engine on a local Ray cluster: same vectors as the local path, clear errors."""

import os
import sys

import numpy as np
import pytest

from embedsearch import EmbedsearchError, Index, InputError, MissingDependencyError
from embedsearch.embed import Embedder

from conftest import run_cli


@pytest.fixture(scope="session")
def local_ray():
    if os.environ.get("EMBEDSEARCH_REQUIRE_RAY"):
        import ray  # CI installs the extra: a missing Ray must fail there, not skip
    else:
        ray = pytest.importorskip("ray", reason="pip install 'embedsearch[ray]' to run the Ray tests")
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, logging_level="ERROR")
    yield ray
    ray.shutdown()


def test_ray_embeddings_equal_the_local_path(local_ray, bundled_docs, tmp_path):
    from embedsearch.distributed import RaySettings, ray_encoder

    texts = [d.embed_text for d in bundled_docs[:12]]
    local = Embedder(cache_dir=tmp_path / "local").embed(texts)
    remote_embedder = Embedder(cache_dir=tmp_path / "ray")
    remote = remote_embedder.embed(texts, encode=ray_encoder(remote_embedder.settings, RaySettings(workers=2)))
    assert remote_embedder.computed == 12
    np.testing.assert_allclose(remote, local, atol=1e-5)


def test_index_built_on_ray_answers_like_a_local_one(local_ray, bundled_docs, bundled_index, tmp_path, monkeypatch):
    from embedsearch.distributed import RaySettings

    monkeypatch.setenv("EMBEDSEARCH_CACHE_DIR", str(tmp_path / "fresh-cache"))
    on_ray = Index.build(bundled_docs, tmp_path / "ray-idx", ray=RaySettings(workers=2))
    np.testing.assert_allclose(on_ray.embeddings, bundled_index.embeddings, atol=1e-5)
    query = "vision-language-action robot policies"
    assert [h.id for h in on_ray.search(query, 5)] == [h.id for h in bundled_index.search(query, 5)]


def test_missing_ray_gives_the_install_hint(monkeypatch):
    from embedsearch.distributed import RaySettings, connect

    monkeypatch.setitem(sys.modules, "ray", None)
    with pytest.raises(MissingDependencyError, match=r"pip install 'embedsearch\[ray\]'"):
        connect(RaySettings())


def test_unreachable_cluster_and_bad_flags(tmp_path):
    corpus = tmp_path / "c.jsonl"
    corpus.write_text('{"id": "a", "text": "An abstract."}\n')
    bad = run_cli("build", str(corpus), "--index", str(tmp_path / "i"), "--engine", "ray", "--ray-address",
                  "127.0.0.1:1")
    assert bad.returncode == 2 and "cannot reach a Ray cluster at '127.0.0.1:1'" in bad.stderr
    assert not (tmp_path / "i").exists()
    usage = run_cli("build", str(corpus), "--index", str(tmp_path / "i"), "--workers", "2")
    assert usage.returncode == 2 and "--workers need --engine ray" in usage.stderr
    with pytest.raises(InputError, match="at least 1"):
        from embedsearch.distributed import RaySettings

        RaySettings(workers=0)
    assert issubclass(InputError, EmbedsearchError)
