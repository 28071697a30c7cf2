"""Word forms that should meet in BM25 and in exclusions: British spellings read as American (breame's
1,730 pairs: ``colouring`` -> ``coloring``), irregular plurals as their singular (lemminflect's English
dictionary, nouns only, where the stemmer would keep them apart: ``vortices`` -> ``vortex``, ``matrices`` ->
``matrix``), before the Snowball stemmer; a British stem the pairs did not list (``colourings``) is mapped to
the American one after it. Regular plurals are the stemmer's own work.

Loading lemminflect's dictionary takes 0.14 s, a third of a search command, so the table is made from the
two libraries once and kept in the cache folder as sealed JSON (about 0.1 MB), named by the libraries'
versions and the stemmer; a damaged copy is made again."""

from __future__ import annotations

import json
from collections.abc import Callable
from functools import lru_cache
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

from ..disk.durable import sealed, unsealed, write_json
from ..embedding.cache import default_cache_dir
from ..errors import MissingDependencyError


class Forms:
    """``words``: a word -> the word whose stem stands for all its forms; ``stems``: a British stem -> the
    American one."""

    def __init__(self, words: dict[str, str], stems: dict[str, str]):
        self.words, self.stems = words, stems


def _versions() -> str:
    try:
        return f"breame-{version('breame')}-lemminflect-{version('lemminflect')}"
    except PackageNotFoundError as exc:
        raise MissingDependencyError(f"{exc.name} is not installed: run `pip install breame lemminflect` "
                                     "(word forms in BM25)") from None


def _made(stem: Callable[[list[str]], list[str]]) -> dict[str, dict[str, str]]:
    from breame.data.spelling_constants import BRITISH_ENGLISH_SPELLINGS as spellings
    from lemminflect import Lemmatizer

    lemmatizer = Lemmatizer()
    lemmatizer.getLemma("vortices", "NOUN")  # loads its dictionary
    words = {}
    for word, lemmas in lemmatizer.lemma_dict.items():
        nouns = lemmas.get("NOUN", ())
        if word.isalpha() and word.islower() and nouns and nouns[0].isalpha() and nouns[0] != word:
            words[word] = nouns[0]
    keys = list(words)
    words = {w: words[w] for w, a, b in zip(keys, stem(keys), stem([words[w] for w in keys])) if a != b}
    words.update({b: words.get(a, a) for b, a in spellings.items()})
    british, american = list(spellings), list(spellings.values())
    return {"words": words, "stems": {b: a for b, a in zip(stem(british), stem(american)) if b != a}}


@lru_cache(maxsize=4)
def forms(stemmer: str | None) -> Forms:
    """The tables for ``stemmer`` (none: words only), from the cache folder or made and kept there."""
    import Stemmer

    stem = Stemmer.Stemmer(stemmer).stemWords if stemmer else (lambda words: list(words))
    file = default_cache_dir() / "forms" / f"{_versions()}-{stemmer or 'none'}.json"
    try:
        raw = json.loads(file.read_text())
        table, intact = unsealed(raw)
        if intact and "sha256" in raw:
            return Forms(table["words"], table["stems"])
    except (OSError, ValueError, KeyError, TypeError):
        pass
    table = _made(stem)
    try:
        Path(file.parent).mkdir(parents=True, exist_ok=True)
        write_json(file, sealed(table))
    except OSError:
        pass  # a read-only cache costs the 0.14 s on every process, nothing else
    return Forms(table["words"], table["stems"])
