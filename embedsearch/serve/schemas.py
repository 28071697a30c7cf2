"""Request bodies: strict (unknown fields are an error), bounded by ``LIMITS``, text that is valid
Unicode without NUL characters. Responses are the CLI's ``--json`` shapes, built by the result
dataclasses themselves."""

from __future__ import annotations

from typing import Annotated, Any, Union

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, model_validator

from ..corpus import Document, parse_record
from ..dedup import OnDuplicate
from ..retrieval.settings import Mode
from .settings import LIMITS


def _clean(text: str) -> str:
    if "\x00" in text:
        raise ValueError("contains a NUL character")
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        raise ValueError("is not valid Unicode (an unpaired surrogate)") from None
    return text


NOT_BLANK = r"^[^\x00]*[^\x00\s][^\x00]*$"  # in the schema too, so clients and fuzzers know text may not be blank
Text = Annotated[str, Field(min_length=1, max_length=LIMITS.text_chars, pattern=NOT_BLANK), AfterValidator(_clean)]
Id = Annotated[str, Field(min_length=1, max_length=LIMITS.id_chars, pattern=r"^[^\x00]+$"), AfterValidator(_clean)]
Scalar = Union[str, int, float, bool, None]
Metadata = Annotated[dict[Annotated[str, Field(max_length=200)], Scalar | list[Scalar]],
                     Field(max_length=LIMITS.metadata_fields)]
K = Annotated[int, Field(ge=1, le=LIMITS.k, strict=True)]  # strict: true is not 1
Share = Annotated[float, Field(ge=0, le=1, strict=True)]


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class SearchBatch(Strict):
    queries: list[Text] = Field(min_length=1, max_length=LIMITS.batch)
    k: K = 10
    mode: Mode | None = None
    filters: list[Annotated[str, Field(max_length=500), AfterValidator(_clean)]] = Field(
        default=[], max_length=LIMITS.filters)
    display: Annotated[bool, Field(strict=True, description="Also give texts rendered for reading.")] = False


class SimilarText(Strict):
    text: Text
    k: K = 10
    display: Annotated[bool, Field(strict=True, description="Also give texts rendered for reading.")] = False


class Abstract(Strict):
    id: Id | None = None
    title: Annotated[str, Field(max_length=2_000), AfterValidator(_clean)] | None = None
    text: Text
    metadata: Metadata = {}

    def document(self, number: int) -> Document:
        return parse_record({**self.metadata, "id": self.id or f"new-{number}", "title": self.title,
                             "text": self.text}, f"abstracts[{number - 1}]")


class DuplicateCheck(Strict):
    """One abstract (``text``) or a batch (``abstracts``); thresholds default to ``DedupSettings``'."""

    text: Text | None = None
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
    title: Annotated[str, Field(max_length=2_000), AfterValidator(_clean)] | None = None
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
