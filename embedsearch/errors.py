"""One small exception hierarchy; every message says what to do next.

The CLI prints ``str(error)`` on one line and exits with ``error.exit_code``: 2 for a usage or
input mistake, 3 for a damaged index.
"""

from __future__ import annotations

USAGE_EXIT = 2
CORRUPT_EXIT = 3


class EmbedsearchError(Exception):
    """Base class for every error embedsearch raises on purpose."""

    exit_code = USAGE_EXIT


class InputError(EmbedsearchError):
    """A corpus, query or argument is malformed; the message names the file, line or field."""


class UnknownIdError(InputError):
    """An id that is not live in the index."""


class IdConflictError(InputError):
    """An id that is already live in the index, or given twice."""


class FieldConflictError(InputError):
    """A metadata value of another kind than its field holds (in the index, or earlier in the same input)."""


class EmptyFilterError(InputError):
    """A filter no live paper of the index passes: an error naming it, never an empty answer (CLI exit 2; the API
    answers 409, the request conflicting with what the index holds)."""


class DuplicateError(InputError):
    """New abstracts duplicate indexed ones and the caller chose to refuse them; ``report`` holds the evidence."""

    def __init__(self, message: str, report: object = None):
        super().__init__(message)
        self.report = report


class IndexStoreError(EmbedsearchError):
    """An index folder is missing, unreadable, corrupted or from an incompatible version."""


class CorruptIndexError(IndexStoreError):
    """A file of an index is damaged (truncated, garbled, inconsistent); the message names it."""

    exit_code = CORRUPT_EXIT


class IndexLockedError(EmbedsearchError):
    """Another process is writing the index and the caller chose not to wait."""


class ModelMismatchError(EmbedsearchError):
    """Vectors from two different embedding models would be mixed."""


class ServiceError(EmbedsearchError):
    """A service could not start as asked (Ray cannot place its replicas); the message says what to change."""


class MissingDependencyError(EmbedsearchError):
    """An optional dependency is not installed; the message carries the install hint."""


def check(owner: object, **bounds: tuple[float | None, float | None]) -> None:
    """Each named field of a settings object within its ``(low, high)`` (None: unbounded; a field left None is
    not checked), else one ``InputError`` naming the field, the range and the value given."""
    for name, (low, high) in bounds.items():
        value = getattr(owner, name)
        if value is not None and not ((low is None or value >= low) and (high is None or value <= high)):
            wanted = (f"between {low} and {high}" if low is not None and high is not None
                      else f"at least {low}" if low is not None else f"at most {high}")
            raise InputError(f"{name} must be {wanted}, got {value}")


def check_choice(what: str, value: object, choices: tuple[str, ...]) -> None:
    """``value`` one of ``choices``, else one ``InputError`` listing them."""
    if value not in choices:
        raise InputError(f"unknown {what} {value!r}; choose one of {', '.join(choices)}")


def require(module: str, extra: str):
    """Import an optional dependency or fail with an install hint."""
    import importlib

    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise MissingDependencyError(
            f"{module} is not installed: run `pip install 'embedsearch[{extra}]'`"
        ) from exc
