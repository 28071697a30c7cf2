"""The typer app, shared options, and the error handling every command goes through."""

from __future__ import annotations

import logging
import os
import sys
from collections.abc import Callable
from functools import wraps
from typing import Any

import typer

from ..errors import EmbedsearchError, InputError

# Help is Markdown (never rich's markup, which would read ``[ray]`` in an install hint as a style and drop it).
app = typer.Typer(add_completion=False, no_args_is_help=True, pretty_exceptions_enable=False,
                  rich_markup_mode="markdown",
                  help="Find related papers, topic maps and near-duplicates in a corpus of abstracts.")

IndexOpt = typer.Option(None, "--index", "-i", help="Index folder (default: the bundled NeurIPS 2026 corpus).")
KOpt = typer.Option(10, "-k", "--k", min=1, help="How many results.")
JsonOpt = typer.Option(False, "--json", help="One JSON object per line instead of a table.")
ForceOpt = typer.Option(False, "--force", help="Replace output files that already exist.")
EngineOpt = typer.Option("local", "--engine", help="local, or ray (pip install 'embedsearch[ray]').")
RayAddressOpt = typer.Option(None, "--ray-address", help="auto (this machine's cluster) or ray://HOST:PORT.")
WorkersOpt = typer.Option(None, "--workers", help="Ray embedding actors (default: GPUs, else CPUs).")


def friendly(fn: Callable[..., Any]) -> Callable[..., Any]:
    """Turn embedsearch errors into one line on stderr and their exit code."""

    @wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        log_to_stderr()
        try:
            return fn(*args, **kwargs)
        except EmbedsearchError as exc:
            typer.echo(f"error: {exc}", err=True)
            raise typer.Exit(exc.exit_code) from None
        except BrokenPipeError:  # output piped into `head`: stop quietly, as other Unix tools do
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
            raise typer.Exit(1) from None
        except OSError as exc:  # an output path that cannot be written, a file that vanished mid-run
            where = f"{exc.filename}: " if exc.filename else ""
            typer.echo(f"error: {where}{exc.strerror or exc}", err=True)
            raise typer.Exit(2) from None
        except MemoryError:
            typer.echo("error: out of memory; nothing was written. Give the command less at once (fewer candidate "
                       "pairs, a smaller batch) or run it on a machine with more memory", err=True)
            raise typer.Exit(2) from None
        except KeyboardInterrupt as exc:
            typer.echo("interrupted; nothing was changed on disk", err=True)
            if getattr(exc, "end_at_once", False):  # a solver's threads: nothing is left to finalise
                sys.stdout.flush()
                sys.stderr.flush()
                os._exit(130)
            raise typer.Exit(130) from None

    return wrapper


def log_to_stderr() -> None:
    """The library logs (a writer waiting for the lock, a deferred merge); a command shows them on stderr."""
    logger = logging.getLogger("embedsearch")
    if not logger.handlers:
        handler = logging.StreamHandler()
        handler.setFormatter(logging.Formatter("%(message)s"))
        logger.addHandler(handler)
        logger.setLevel(logging.INFO)


def ray_settings(engine: str, address: str | None, workers: int | None = None):
    """``RaySettings`` for ``--engine ray``, None for the local engine; Ray flags without it are an error."""
    if engine not in ("local", "ray"):
        raise InputError(f"unknown engine {engine!r}; choose local or ray")
    if engine == "local":
        if address or workers:
            raise InputError("--ray-address and --workers need --engine ray")
        return None
    from ..jobs.settings import RaySettings

    return RaySettings(address=address, workers=workers)


def open_index(path: str | None, model: str | None = None):
    from ..index import Index

    if path is None:
        return Index.bundled(progress=True)
    return Index.load(path, model=model)


def one_line(text: str) -> str:
    """Control characters (a line break inside an id) shown escaped, so each result stays on one line."""
    return "".join(ch if ch.isprintable() or ch == " " else repr(ch)[1:-1] for ch in text)
