"""Topics on the cluster's ingress: ``/topics`` and ``/map`` over every shard, as one index's server gives
them. The first request for a cut asks for its topics (``Cluster.topics``: a sample fitted across the
shards, the rest assigned shard by shard), fitted in a child process that saves them in the cluster's
``topics/`` folder; until they are ready the answer is 503 with ``Retry-After``, and after a write the
newest model ready is served (naming its ``cut``) while the next cut's is made: the last fit carried over
(new papers join their nearest papers' topics, labels stay), or fitted again once too much has changed."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

from ..index import Index
from ..store import cuts
from .topics import Ready, TopicsState

FIT = "import sys; from embedsearch import Index; Index.load(sys.argv[1], generation=int(sys.argv[2])).topics()"


class ClusterTopics:
    """The ingress's topics: the newest model ready and its rendered maps."""

    def __init__(self, root: Path):
        self.root = root
        self.state = TopicsState(fit=self._fit)
        self._maps: dict[tuple[int, int], str] = {}

    def require(self) -> Ready:
        """The newest model ready (or the API's 503), after asking for the newest cut's."""
        newest = cuts.newest(self.root).number
        if self.state.ready is None or self.state.ready.generation != newest:
            self.state.want(newest)
        return self.state.require()

    def json(self, level: int) -> dict[str, Any]:
        ready = self.require()
        return {**ready.model.to_json(level), "cut": ready.generation}

    def map(self, level: int) -> str:
        """The map page of the newest model ready; its search box asks the ingress's ``/search``."""
        from ..topics.maps import render_html
        from .page import check_level

        ready = self.require()
        model = check_level(ready.model, level)
        key = (ready.generation, level)
        if key not in self._maps:
            cluster = Index.load(self.root, generation=ready.generation)
            title = f"{cluster.name}: {len(model.ids)} papers in {len(cluster.snapshot.parts)} shards, " \
                    f"{len(model.topics(level))} topics"
            self._maps = {key: render_html(model, cluster.documents, title, level, plotly_src="/static/plotly.min.js",
                                           search_api="/search")}
        return self._maps[key]

    def _fit(self, cut: int) -> Ready:
        """Fit (or find saved) in a child process, which frees UMAP's and numba's memory when it ends, then
        read the saved model here."""
        from filelock import FileLock

        folder = self.root / "topics"
        folder.mkdir(exist_ok=True)
        with FileLock(str(folder / ".fit.lock")):
            done = subprocess.run([sys.executable, "-c", FIT, str(self.root), str(cut)], capture_output=True,
                                  text=True)
        if done.returncode != 0:
            lines = done.stderr.strip().splitlines()
            raise RuntimeError(lines[-1] if lines else f"the fit ended with exit status {done.returncode}")
        return Ready(Index.load(self.root, generation=cut).topics(), cut)

