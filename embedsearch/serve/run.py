"""Start the service: check the index and the token first (one line and exit 2 when either is wrong),
then hand over to uvicorn with one or more worker processes."""

from __future__ import annotations

import os
import socket
import sys
from pathlib import Path

import uvicorn

from ..errors import CorruptIndexError, IndexStoreError, InputError
from .app import environment
from .settings import TOKEN_ENV, ServeSettings


def read_token(token_file: Path | None) -> str | None:
    """The write token: from ``--token-file`` or the ``EMBEDSEARCH_TOKEN`` variable, never the command line."""
    if token_file is not None:
        try:
            token = token_file.read_text(encoding="utf-8").strip()
        except (OSError, UnicodeDecodeError) as exc:
            raise InputError(f"--token-file {token_file}: cannot read it ({exc})") from None
        if not token:
            raise InputError(f"--token-file {token_file} is empty; put the token on its first line")
        return token
    return os.environ.get(TOKEN_ENV, "").strip() or None


def check_index(path: Path) -> Path:
    """The index folder to serve, opened and checked (sizes of every file) before the server starts."""
    from ..index import Index

    try:
        index = Index.load(path)
    except CorruptIndexError as exc:
        raise IndexStoreError(str(exc)) from None
    problems = index.check()
    if problems:
        raise IndexStoreError(f"{index.path} is damaged ({problems[0]}); run `embedsearch check --index "
                              f"{index.path}` and rebuild or restore it")
    return index.path


def check_port(host: str, port: int) -> None:
    """Fail with one line before anything says "serving" when the address cannot be listened on."""
    try:
        with socket.create_server((host, port)):
            pass
    except OSError as exc:
        raise InputError(f"cannot listen on {host}:{port} ({exc.strerror or exc}); another server may hold it: "
                         "stop it or choose another --port") from None


def serve(path: Path, settings: ServeSettings, token: str | None) -> None:
    if settings.writable and token is None:
        raise InputError(f"--writable needs a token: set {TOKEN_ENV} or pass --token-file FILE")
    path = check_index(path)
    if settings.reviewers:
        from ..index import Index
        from ..reviewers import Matcher

        served = Index.load(path)
        Matcher.open(settings.reviewers, served.model_name, progress=True,
                     precision=served.manifest.model.settings.precision)  # built once, before workers
    check_port(settings.host, settings.port)
    os.environ.update(environment(path, settings))
    if settings.workers > 1:
        from ..embedding.onnx_encoder import THREADS_ENV

        os.environ.setdefault(THREADS_ENV, str(max(1, (os.cpu_count() or 1) // settings.workers)))
    print(f"serving {path} on http://{settings.host}:{settings.port} ({settings.workers} worker(s), "
          f"{'writable' if settings.writable else 'read-only'}); API docs at /docs; Ctrl-C stops",
          file=sys.stderr, flush=True)
    if token is not None:
        os.environ[TOKEN_ENV] = token
    config = _Config("embedsearch.serve.app:from_environment", factory=True, host=settings.host, port=settings.port,
                     workers=settings.workers, log_level="warning", timeout_graceful_shutdown=5)
    if settings.workers == 1:
        uvicorn.Server(config).run()
        return
    from uvicorn.supervisors import Multiprocess

    Multiprocess(config, sockets=[config.bind_socket()]).run()


class _Config(uvicorn.Config):
    """uvicorn's config with a listening socket that says it is TCP: uvicorn binds it with ``proto`` 0, so
    asyncio leaves Nagle on for every connection and each keep-alive request past the first waits ~40 ms for
    a delayed ACK with ``--workers`` > 1 (uvicorn issue #3149). Re-reading the descriptor fixes it."""

    def bind_socket(self) -> socket.socket:
        return socket.socket(fileno=super().bind_socket().detach())
