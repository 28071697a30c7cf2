"""The command as a whole: every command module registered (importing it adds its commands to ``app``),
the help's panels in the order a newcomer needs them, and ``main``, which runs a command and ends it:
a usage mistake is one line on stderr with exit code 2."""

from . import chairs, dedup, manage, recommend, reviewers, search, serve, topics, watch  # noqa: F401 (registers)
from .app import app

# The help lists commands in the order a newcomer needs them, each group under its heading.
PANELS = {
    "Build and search": ("build", "search", "similar", "recommend", "watch", "info", "eval"),
    "Maintenance": ("add", "remove", "compact", "check", "shard", "upgrade", "cache"),
    "Topics": ("topics", "map"),
    "Duplicates": ("dedup",),
    "Reviewers": ("affinity", "assign", "assign-sac"),
    "Serve": ("serve",),
}
_ORDER = [name for names in PANELS.values() for name in names]
_PANEL = {name: panel for panel, names in PANELS.items() for name in names}


def _name(info) -> str:
    return info.name or info.callback.__name__.replace("_", "-")


app.registered_commands.sort(key=lambda info: _ORDER.index(_name(info)) if _name(info) in _ORDER else len(_ORDER))
for _info in app.registered_commands:
    _info.rich_help_panel = _PANEL.get(_name(_info), "Other")
for _group in app.registered_groups:
    _group.rich_help_panel = _PANEL.get(_group.name or "", "Other")


def main() -> None:
    """Run the command; a usage mistake (unknown option, value out of range) is one line on stderr,
    exit code 2, like every other bad input."""
    import sys

    import typer

    try:
        code = app(prog_name="embedsearch", standalone_mode=False)
    except typer.Abort:
        typer.echo("interrupted; nothing was changed on disk", err=True)
        code = 130
    except Exception as exc:  # click's usage errors, which typer vendors under a private module
        if not (hasattr(exc, "format_message") and isinstance(getattr(exc, "exit_code", None), int)):
            raise
        ctx = getattr(exc, "ctx", None)
        if type(exc).__name__ == "NoArgsIsHelpError" and ctx is not None:
            typer.echo(ctx.get_help(), err=True)
        else:
            where = f" (see `{ctx.command_path} --help`)" if ctx is not None else ""
            typer.echo(f"error: {exc.format_message()}{where}", err=True)
        code = exc.exit_code
    code = code if isinstance(code, int) else 0
    if len(sys.argv) > 1 and sys.argv[1] in READ_ONLY:
        _leave(code)
    sys.exit(code)


# Commands that write nothing and start no thread: they end without the interpreter's teardown of faiss and
# onnxruntime, a tenth of a second of a search command (benchmarks/HISTORY.md, "A search command").
READ_ONLY = frozenset({"search", "similar", "info"})


def _leave(code: int) -> None:
    import logging
    import os
    import sys

    logging.shutdown()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            code = code or 1
    os._exit(code)

