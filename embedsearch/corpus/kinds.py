"""The field contract of an index: each metadata field's kind, set by the first value a field is given and
checked for every record after it, at build and at every add, before anything is written. One record whose
``year`` is a list, text or ``Infinity`` is refused (or skipped) instead of turning the field into text and
disabling ``year>=`` filters for everyone.

Kinds: ``number``, ``text``, ``boolean``, and ``list of numbers``, ``list of text``, ``list of booleans``.
A missing value (the field absent, ``null``, NaN as pandas writes one, an empty CSV cell, an empty list) fits
every kind and changes none. A number field takes whole and decimal numbers (within 64 bits) and text that
reads as one (CSV cells); a text field takes text and numbers (kept as text); a list field takes lists of its
element kind and a single such value (a one-element list). Lists hold no nulls and no mix of kinds.

While a corpus is first read, a field whose values so far were all numeric *text* (a CSV column) becomes text
when a cell that is not a number arrives, since nothing typed was stored; once recorded, kinds never change."""

from __future__ import annotations

import math
from typing import Any

NUMBER, TEXT, BOOLEAN = "number", "text", "boolean"
LIST = "list of "
KINDS = (NUMBER, TEXT, BOOLEAN, LIST + "numbers", LIST + "text", LIST + "booleans")
_PLURAL = {NUMBER: "numbers", TEXT: "text", BOOLEAN: "booleans"}
_SINGULAR = {v: k for k, v in _PLURAL.items()}
INT64 = (-(2 ** 63), 2 ** 63 - 1)


class Mismatch(str):
    """Why a value does not fit the kind its field already holds: a conflict with what was recorded, where
    any other problem is a value no field can store."""


def element(kind: str) -> str:
    """The kind of one value of a field: ``number`` for ``list of numbers``, the kind itself for scalars."""
    return _SINGULAR[kind[len(LIST):]] if kind.startswith(LIST) else kind


def is_list(kind: str) -> bool:
    return kind.startswith(LIST)


def describe(kind: str) -> str:
    return {NUMBER: "numbers", TEXT: "text", BOOLEAN: "booleans (true/false)"}.get(kind, f"lists of {kind[len(LIST):]}")


def _scalar(value: Any) -> tuple[str, bool] | None:
    """A scalar's kind and whether it is only numeric text (None when missing); a ValueError when no field
    can store it."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return None
    if isinstance(value, bool):
        return BOOLEAN, False
    if isinstance(value, int):
        if not INT64[0] <= value <= INT64[1]:
            raise ValueError(f"{value} is beyond 64-bit integers; write it as text (in quotes) if it is a code")
        return NUMBER, False
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ValueError(f"{value} is not a finite number; leave the value out (or null) when it is unknown")
        return NUMBER, False
    if isinstance(value, str):
        if not value.strip():
            return None
        return (NUMBER, True) if _numeric_text(value) else (TEXT, False)
    return TEXT, False  # stored as its JSON text (nested objects)


def _numeric_text(text: str) -> bool:
    return finite_number(text) is not None


def finite_number(value: Any) -> float | None:
    """``value`` as a finite number (a numeric string counts, a bool does not), else None."""
    if isinstance(value, bool) or value is None:
        return None
    try:
        number = float(value)
    except (TypeError, ValueError, OverflowError):
        return None
    return number if math.isfinite(number) else None


def value_kind(value: Any) -> tuple[str, bool] | None:
    """The kind a value gives a field, and whether that kind rests on numeric text alone; None when the value
    is missing. A ValueError says why no field can hold it (a huge integer, an infinity, a mixed list)."""
    if not isinstance(value, (list, tuple)):
        return _scalar(value)
    if not value:
        return None
    kinds = []
    for item in value:
        if isinstance(item, (list, tuple, dict)) or item is None:
            raise ValueError(f"the list {_show(value)} holds {'null' if item is None else 'a nested value'}; "
                             "a list holds plain values of one kind")
        kinds.append(_scalar(item) if not isinstance(item, str) else (TEXT, False))
    found = {k for k, _ in kinds if k}
    if len(found) > 1:
        raise ValueError(f"the list {_show(value)} mixes {' and '.join(sorted(_PLURAL[k] for k in found))}; "
                         "a list holds values of one kind")
    return LIST + _PLURAL[found.pop()], False


def _show(value: Any, limit: int = 60) -> str:
    text = repr(list(value)) if isinstance(value, tuple) else repr(value)
    return text if len(text) <= limit else text[:limit - 1] + "…"


def fits(kind: str, value: Any) -> bool:
    """Whether ``value`` may be stored in a field of ``kind`` (a missing value always may)."""
    given = value_kind(value)
    if given is None:
        return True
    found, _ = given
    if found == kind:
        return True
    if kind == TEXT:
        return found == NUMBER and not isinstance(value, bool)
    if is_list(kind) and not is_list(found):
        return fits(element(kind), value)
    return False


class FieldKinds:
    """The kinds of an index's fields, learning new fields as records arrive. ``recorded`` kinds (those an
    index already holds) are fixed; kinds learned here may still turn from numeric text to text."""

    def __init__(self, recorded: dict[str, str] | None = None):
        self.kinds: dict[str, str] = dict(recorded or {})
        self._fixed = set(self.kinds)
        self._soft: set[str] = set()
        self._first: dict[str, str] = {}

    def admit(self, metadata: dict[str, Any], where: str = "") -> str | None:
        """Why this record's metadata does not fit the fields' kinds (the contract is then unchanged), else
        None, after learning the kinds of fields seen for the first time."""
        learned: dict[str, tuple[str, bool]] = {}
        for name in sorted(metadata):
            value = metadata[name]
            try:
                given = value_kind(value)
            except ValueError as exc:
                return f"field {name!r}: {exc}"
            if given is None:
                continue
            kind = self.kinds.get(name)
            if kind is None:
                learned[name] = given
            elif name in self._soft and given != (NUMBER, True):
                if given[0] not in (TEXT, NUMBER):
                    return self._problem(name, kind, value)
                learned[name] = given
            elif not fits(kind, value):
                return self._problem(name, kind, value)
        for name, (kind, soft) in learned.items():
            self.kinds[name] = kind
            (self._soft.add if soft else self._soft.discard)(name)
            self._first.setdefault(name, where)
        return None

    def _problem(self, name: str, kind: str, value: Any) -> str:
        since = f" (since {self._first[name]})" if self._first.get(name) else ""
        held = "this index" if name in self._fixed else "this corpus"
        hint = ("give a number, leave it out or null when unknown, or put the value in another field"
                if element(kind) == NUMBER else "give a value of that kind, or put this one in another field")
        return Mismatch(f"field {name!r} holds {describe(kind)} in {held}{since}, but this record has {_show(value)}; "
                        f"{hint}")


def combine(recorded: list[dict[str, str]]) -> dict[str, str]:
    """One contract from several segments' records: the same kind, or text where one says number (a numeric
    text column that a later record of the same first build turned into text)."""
    out: dict[str, str] = {}
    for kinds in recorded:
        for name, kind in kinds.items():
            seen = out.setdefault(name, kind)
            if seen != kind:
                out[name] = TEXT if {seen, kind} <= {TEXT, NUMBER} else seen
    return out


def stored(kind: str, value: Any) -> Any:
    """``value`` as a field of ``kind`` stores it for filters: numbers as numbers, anything in a text field
    as text, a single value of a list field as a one-element list; missing as None."""
    import json

    if value_kind(value) is None:
        return None
    if is_list(kind):
        items = value if isinstance(value, (list, tuple)) else [value]
        return [stored(element(kind), item) for item in items]
    if kind == NUMBER:
        if isinstance(value, str):
            number = float(value)
            return int(number) if number.is_integer() and abs(number) < 2 ** 53 else number
        return value
    if kind == TEXT and not isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    return value
