"""Request bodies: strict (unknown fields are an error), bounded by ``LIMITS``, text that is valid
Unicode without NUL characters. Responses are the CLI's ``--json`` shapes, built by the result
dataclasses themselves."""

from __future__ import annotations

import re
from typing import Annotated, Any, Literal, Union

from pydantic import AfterValidator, BaseModel, BeforeValidator, ConfigDict, Field, model_validator

from ..corpus import Document, parse_record
from ..corpus.kinds import NUMBER, element
from ..dedup import OnDuplicate
from ..retrieval.query import REFUSED
from ..retrieval.settings import Mode, Sort
from .settings import LIMITS


def _clean(text: str) -> str:
    if "\x00" in text:
        raise ValueError("contains a NUL character")
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        raise ValueError("is not valid Unicode (an unpaired surrogate)") from None
    return text


NOT_BLANK = r"^[^\x00]*[^\x00\s][^\x00]*$"
# What the schema states is each rule the server enforces, as a pattern a client or fuzzer can use (one both
# Python's and JSON Schema validators read): text is not blank and holds no NUL; a search needs a letter or
# digit; an id has no control character and no space at either end. The runtime patterns are the parts
# pydantic's engine checks; the rest is checked in code, whose errors name the rule.
_CHAR = r"[^\x00]"
TEXT = rf"^{_CHAR}*[^\x00\s\x1c-\x1f]{_CHAR}*$"  # \x1c-\x1f: space to Python, not to every engine
WORDS = rf"^{_CHAR}*[^\W_]{_CHAR}*$"
QUERY = rf"^(?![\s\S]*(?:{REFUSED})){_CHAR}*[^\W_]{_CHAR}*$"  # a search: words, in the grammar of retrieval.query
_ID_END, _ID_CHAR = r"[^\s\x00-\x1f\x7f-\x9f\u2028\u2029]", r"[^\x00-\x1f\x7f-\x9f\u2028\u2029]"
ID = rf"^{_ID_END}(?:{_ID_CHAR}*{_ID_END})?$"
PATH_ID = r"^[^\x00-\x1f\x7f]+$"  # what a path may hold (``guard.BodyLimit``); an unknown id is a 404


def stated(pattern: str) -> dict[str, Any]:
    """The schema's pattern for a field or parameter whose rule is checked in code (its error stays that code's)."""
    return {"json_schema_extra": {"pattern": pattern}}


Text = Annotated[str, Field(min_length=1, max_length=LIMITS.text_chars, pattern=NOT_BLANK, **stated(TEXT)),
                 AfterValidator(_clean)]
Words = Annotated[str, Field(min_length=1, max_length=LIMITS.text_chars, pattern=NOT_BLANK, **stated(WORDS)),
                  AfterValidator(_clean)]
QueryText = Annotated[str, Field(min_length=1, max_length=LIMITS.text_chars, pattern=NOT_BLANK, **stated(QUERY)),
                      AfterValidator(_clean)]
Id = Annotated[str, Field(min_length=1, max_length=LIMITS.id_chars, pattern=r"^[^\x00]+$", **stated(ID)),
               AfterValidator(_clean)]
Title = Annotated[str, Field(max_length=2_000, **stated(rf"^{_CHAR}*$")), AfterValidator(_clean)]
_INT64 = {"minimum": -(2 ** 63), "maximum": 2 ** 63 - 1}
_STORABLE = [{"type": "string", "pattern": rf"^{_CHAR}*$"}, {"type": "number", **_INT64}, {"type": "boolean"}]
Scalar = Union[str, int, float, bool, None]
Metadata = Annotated[dict[Annotated[str, Field(max_length=200)], Scalar | list[Scalar]],
                     Field(max_length=LIMITS.metadata_fields, json_schema_extra={
                         "propertyNames": {"maxLength": 200, "pattern": rf"^{_CHAR}*$"}, "additionalProperties": {
                         "anyOf": [*_STORABLE, {"type": "null"}, *({"type": "array", "items": s} for s in _STORABLE)],
                         "description": "A field's value: a number (within 64-bit integers), text, true/false, or a "
                                        "list of one of them; null when unknown. A field keeps the kind it was "
                                        "first given (another kind is 409)."}})]


def _number(value: Any) -> Any:
    """A count as JSON gives it: a whole number (``10`` or ``10.0``), never ``true`` or ``"10"``."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ValueError("must be a whole number")
    return value


K = Annotated[int, Field(ge=1, le=LIMITS.k), BeforeValidator(_number)]
Offset = Annotated[int, Field(ge=0, le=LIMITS.offset, description="Results to skip: the next page starts at offset + k."),
                   BeforeValidator(_number)]
Share = Annotated[float, Field(ge=0, le=1, strict=True)]
FilterText = Annotated[str, Field(max_length=500, description="FIELD=VALUE or FIELD>=NUMBER (also !=, <=, <, >)"),
                       AfterValidator(_clean)]


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class SearchBatch(Strict):
    queries: list[QueryText] = Field(min_length=1, max_length=LIMITS.batch)
    k: K = 10
    offset: Offset = 0
    mode: Mode | None = None
    sort: Sort = "relevance"
    filters: list[FilterText] = Field(default=[], max_length=LIMITS.filters)
    display: Annotated[bool, Field(strict=True, description="Also give texts rendered for reading.")] = False


class SimilarText(Strict):
    text: Words
    k: K = 10
    display: Annotated[bool, Field(strict=True, description="Also give texts rendered for reading.")] = False


class Abstract(Strict):
    id: Id | None = None
    title: Title | None = None
    text: Words
    metadata: Metadata = {}

    def document(self, number: int) -> Document:
        return parse_record({**self.metadata, "id": self.id or f"new-{number}", "title": self.title,
                             "text": self.text}, f"abstracts[{number - 1}]")


def _text_or_abstracts(schema: dict[str, Any]) -> None:
    """The schema says what the validator does: exactly one of ``text`` and ``abstracts``, neither null."""
    for name in ("text", "abstracts"):
        prop = schema["properties"][name]
        prop.update(next(s for s in prop.pop("anyOf") if s.get("type") != "null"))
        prop.pop("default", None)
    schema["oneOf"] = [{"required": ["text"]}, {"required": ["abstracts"]}]


class DuplicateCheck(Strict):
    """One abstract (``text``) or a batch (``abstracts``); thresholds default to ``DedupSettings``'."""

    model_config = ConfigDict(extra="forbid", json_schema_extra=_text_or_abstracts)

    text: Words | None = None
    abstracts: list[Abstract] | None = Field(default=None, min_length=1, max_length=LIMITS.batch)
    threshold: Share | None = None
    min_cosine: Share | None = None
    min_overlap: Share | None = None
    display: Annotated[bool, Field(strict=True, description="Also give texts rendered for reading.")] = False

    @model_validator(mode="after")
    def _one_form(self) -> DuplicateCheck:
        if (self.text is None) == (self.abstracts is None):
            raise ValueError("give either text (one abstract) or abstracts (a list), not both")
        return self

    def documents(self) -> list[Document]:
        if self.text is not None:
            return [parse_record({"id": "new", "text": self.text}, "text")]
        return [a.document(n) for n, a in enumerate(self.abstracts or [], start=1)]

    def overrides(self) -> dict[str, Any]:
        given = {"threshold": self.threshold, "min_cosine": self.min_cosine, "min_overlap": self.min_overlap}
        return {k: v for k, v in given.items() if v is not None}


class NewDocument(Strict):
    id: Id
    title: Title | None = None
    text: Text
    metadata: Metadata = {}

    def document(self, number: int) -> Document:
        return parse_record({**self.metadata, "id": self.id, "title": self.title, "text": self.text},
                            f"documents[{number}]")


class AddDocuments(Strict):
    documents: list[NewDocument] = Field(min_length=1, max_length=LIMITS.add)
    check_duplicates: Annotated[bool, Field(strict=True)] = False
    on_duplicate: OnDuplicate = Field("refuse", description=(
        "With check_duplicates: refuse the whole add (409), skip the duplicates, or add them anyway."))


_NUMBER, _WHOLE = r"-?[0-9]{1,15}(?:\.[0-9]{1,6})?", r"-?[0-9]{1,15}"
_VALUE = r"[^<>=!\s\x00\x1c-\x1f][^\x00\n]{0,200}"


def filter_pattern(kinds: dict[str, str]) -> str | None:
    """The filters an index with these field kinds answers, as one pattern: ``FIELD=VALUE`` (also ``!=``) on
    each field, comparisons on its numeric ones, where ``=`` takes a whole number (a field of whole numbers
    refuses 2.5); None when no field can be named in a filter."""
    alternatives = []
    for name, kind in sorted(kinds.items()):
        if not re.fullmatch(r"[^<>=!\s]+", name):
            continue
        field = re.escape(name)
        alternatives += ([rf"{field}\s*(?:>=|<=|>|<)\s*{_NUMBER}", rf"{field}\s*(?:==|=|!=)\s*{_WHOLE}"]
                         if element(kind) == NUMBER else [rf"{field}\s*(?:==|=|!=)\s*{_VALUE}"])
    return "^(?:" + "|".join(alternatives) + ")$" if alternatives else None


def state_filters(openapi: dict[str, Any], kinds: dict[str, str]) -> dict[str, Any]:
    """The OpenAPI description with the filters this index answers stated where filters are taken (``GET
    /search``'s ``filter``, ``POST /search``'s ``filters``): its fields and the comparisons each allows."""
    pattern = filter_pattern(kinds)
    get = next(p for p in openapi["paths"]["/search"]["get"]["parameters"] if p["name"] == "filter")["schema"]
    for array in (get, openapi["components"]["schemas"]["SearchBatch"]["properties"]["filters"]):
        if pattern is None:
            array["maxItems"] = 0
        else:
            array["items"]["pattern"] = pattern
    return openapi


ExportFormat = Literal["json", "bibtex", "ris", "csl-json"]


class LibraryText(Strict):
    """A reader's library file sent as text (the page's import): its kind and contents."""

    kind: Literal["bibtex", "ris", "csl-json", "zotero-csv"]
    text: Annotated[str, Field(min_length=1, max_length=LIMITS.body_bytes), AfterValidator(_clean)]


def _seeds(schema: dict[str, Any]) -> None:
    """The schema says what ``recommend`` needs: a liked id, or a library (an id both liked and unliked is liked)."""
    schema["anyOf"] = [{"required": ["like"], "properties": {"like": {"minItems": 1}}}, {"required": ["library"]}]
    schema["properties"]["library"].pop("default", None)
    prop = schema["properties"]["library"]
    prop.update(next(s for s in prop.pop("anyOf") if s.get("type") != "null"))


class RecommendBody(Strict):
    model_config = ConfigDict(extra="forbid", json_schema_extra=_seeds)

    like: list[Id] = Field(default=[], max_length=LIMITS.add)
    unlike: list[Id] = Field(default=[], max_length=LIMITS.add)
    library: LibraryText | None = None
    k: K = 10
    filters: list[FilterText] = Field(default=[], max_length=LIMITS.filters)
    format: ExportFormat = "json"
    display: Annotated[bool, Field(strict=True, description="Also give texts rendered for reading.")] = False
