"""A real ``embedsearch serve`` process on 127.0.0.1 for the service tests, and a corpus with metadata."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
from conftest import REPO

TOKEN = "test-token-7f3a"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    """``embedsearch serve`` in its own process; ``stop`` ends it."""

    def __init__(self, index: Path, *args: str, token: str | None = TOKEN, timeout: float = 90):
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        env = {**os.environ, **({"EMBEDSEARCH_TOKEN": token} if token else {})}
        if token is None:
            env.pop("EMBEDSEARCH_TOKEN", None)
        self.log = open(Path(index).parent / f"serve-{self.port}.log", "w+")
        self.proc = subprocess.Popen([sys.executable, "-m", "embedsearch", "serve", "--index", str(index),
                                      "--port", str(self.port), *args], cwd=REPO, env=env,
                                     stdout=self.log, stderr=subprocess.STDOUT)
        deadline = time.time() + timeout
        while time.time() < deadline:
            if self.proc.poll() is not None:
                raise AssertionError(f"server exited with {self.proc.returncode}: {self.output()}")
            try:
                if httpx.get(self.url + "/health", timeout=2).status_code == 200:
                    return
            except httpx.HTTPError:
                time.sleep(0.2)
        self.stop()
        raise AssertionError(f"server did not answer within {timeout} s: {self.output()}")

    def output(self) -> str:
        self.log.flush()
        self.log.seek(0)
        return self.log.read()

    def client(self, **kwargs) -> httpx.Client:
        return httpx.Client(base_url=self.url, timeout=30, **kwargs)

    def wait_for_topics(self, timeout: float = 240) -> dict:
        deadline = time.time() + timeout
        while time.time() < deadline:
            r = httpx.get(self.url + "/topics", timeout=10)
            if r.status_code == 200:
                return r.json()
            assert r.status_code == 503, r.text
            time.sleep(1)
        raise AssertionError("topics were not ready in time")

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
        self.log.close()


def corpus_with_metadata(documents, path: Path) -> Path:
    """The bundled abstracts as JSONL with two fields to filter on: ``track`` (by source file) and
    ``year`` (alternating); texts unchanged, so their vectors come from the embedding cache."""
    tracks = {}
    with path.open("w", encoding="utf-8") as fh:
        for number, doc in enumerate(documents):
            track = tracks.setdefault(doc.id.split("_")[0], "ABC"[len(tracks) % 3])
            fh.write(json.dumps({"id": doc.id, "text": doc.text, "track": track,
                                 "year": 2025 + number % 2}) + "\n")
    return path
