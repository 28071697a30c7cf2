"""The query grammar the CLI, the API and the page share. Free words are searched as before; besides them:

- ``"exact phrase"``: the title or abstract holds the phrase (its words are searched too);
- ``-word``, ``-"a phrase"``: neither the title nor the abstract holds it;
- ``author:Name``, ``author:"First Last"``: one of the paper's authors has every word of the name as a whole
  word (accents, case and punctuation ignored), so ``author:hinton`` finds Geoffrey Hinton;
- ``title:word``, ``title:"a phrase"``: the title holds it (its words are searched too);
- ``year:2020``, ``year:2019..2022``, ``year:>=2019`` (also ``>``, ``<=``, ``<``): the ``year`` field.

A term starts a whitespace-separated token. A token ``name:value`` whose name is no field above is an error,
as is a malformed year or a field with no value; each error quotes the token (``REFUSED`` states these rules
as one pattern, for the API's schema). Every term is exact over the whole corpus (``fielded``): free words rank
within the papers that hold them all, and a query of narrowing terms only lists every paper it matches, newest
first. Words and phrases match whole words, ignoring case, accents and punctuation."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..corpus.fold import author_names, plain
from ..errors import InputError
from .filters import Filter

FIELDS = ("author", "title", "year")
GRAMMAR = ('"exact phrase", -word, -"phrase", author:Name, author:"First Last", title:word, title:"phrase", '
           'year:2020, year:2019..2022, year:>=2019')
_TOKEN = re.compile(r'(?<!\S)(-?)(?:([A-Za-z_]+):)?(?:"([^"]*)"(?!\S)|(\S+))')
_YEARS = r"(?:\d{1,4}\.\.\d{1,4}|(?:>=|<=|>|<)?\d{1,4})"
_YEAR = re.compile(r"^(?:(\d{1,4})\.\.(\d{1,4})|(>=|<=|>|<)?(\d{1,4}))$")


def _anycase(word: str) -> str:
    return "".join(f"[{c.upper()}{c}]" for c in word)


_KNOWN = "|".join(_anycase(f) for f in FIELDS)
# What ``parse`` refuses, as one pattern of the tokens it refuses (ECMA-262 and Python alike): a name that is
# no field, a field with a blank quoted value, a year that is not one. The tokens before a refused one are read
# as ``_TOKEN`` reads them, each taken whole (a lookahead's capture, then a back-reference: an atomic group in
# both dialects), so text inside a quoted phrase is never read as a token. Its one group is the first of any
# pattern that embeds it.
_ONE_TOKEN = r'(?=(-?(?:[A-Za-z_]+:)?(?:"[^"]*"(?!\S)|\S+)))\1'
REFUSED = (rf'^\s*(?:{_ONE_TOKEN}\s+)*-?(?:(?!(?:{_KNOWN}):)[A-Za-z_]+:(?!//)\S|(?:{_KNOWN}):"\s*"(?!\S)'
           rf'|{_anycase("year")}:(?=\S)(?!{_YEARS}(?:\s|$)|"\s*{_YEARS}\s*"(?:\s|$)))')


@dataclass(frozen=True)
class Query:
    """A parsed query: ``text`` is what is searched (free words, phrases and title terms); the rest narrow."""

    text: str
    phrases: tuple[str, ...] = ()
    without: tuple[str, ...] = ()
    authors: tuple[str, ...] = ()
    titles: tuple[str, ...] = ()
    filters: tuple[Filter, ...] = ()
    free: bool = True  # it has words to rank by; without them it lists every paper it matches

    @property
    def narrows(self) -> bool:
        """Whether hits are checked after the search (phrases, exclusions, authors, title terms)."""
        return bool(self.phrases or self.without or self.authors or self.titles)

    def keeps(self, title: str | None, text: str, metadata: dict[str, Any],
              tokenize: Callable[[str], list[str]] | None = None) -> bool:
        """Whether a paper holds every narrowing term (years are filters, checked apart). With ``tokenize``
        (an index's BM25 tokenizer that meets word forms), an exclusion of one word also refuses its forms,
        as a search over the index does (``fielded``)."""
        if tokenize is not None and self.without:
            shunned = {t for w in self.without if len(plain(w).split()) == 1 for t in tokenize(w)}
            if shunned and not shunned.isdisjoint(tokenize(f"{title or ''} {text}")):
                return False
        return self.holds(plain(f"{title or ''} {text}"), plain(title), author_names(metadata))

    def holds(self, body: str, title: str, names: list[str]) -> bool:
        """``keeps`` on a paper's text already folded: its title and abstract, its title, its author names."""
        if any(plain(p) not in body for p in self.phrases) or any(plain(w) in body for w in self.without):
            return False
        if any(plain(t) not in title for t in self.titles):
            return False
        return all(any(all(f" {w} " in n for w in plain(a).split()) for n in names) for a in self.authors)

def parse(raw: str) -> Query:
    words: list[str] = []
    phrases, without, authors, titles, filters = [], [], [], [], []
    for match in _TOKEN.finditer(raw):
        minus, field, quoted, bare = match.groups()
        token = match.group(0)
        value = quoted if quoted is not None else bare
        if field is None and minus and (quoted is not None or re.match(r"[^\W\d_]", bare)):
            without.append(value)
        elif field is None:
            words.append(token if quoted is None else value)
            if quoted is not None and value.strip():
                phrases.append(value)
        elif field.lower() not in FIELDS:
            if bare is not None and bare.startswith("//"):  # an address, not a field
                words.append(token)
                continue
            raise InputError(f"unknown field {field!r} in {token!r}; the fields are author:, title: and "
                             "year: (quote a word with a colon to search for it)")
        elif not value.strip():
            raise InputError(f"{token!r} names no value; write {field}:VALUE")
        elif field.lower() == "author":
            authors.append(value)
        elif field.lower() == "title":
            titles.append(value)
            words.append(value)
        else:
            filters += _years(value, token)
    free = bool(words) or not (phrases or without or authors or titles or filters)  # a blank query is no listing
    return Query(" ".join(words or authors or [raw]).strip(), tuple(phrases), tuple(without), tuple(authors),
                 tuple(titles), tuple(filters), free)


def _years(value: str, token: str) -> list[Filter]:
    found = _YEAR.match(value.strip())
    if not found:
        raise InputError(f"{token!r} is not a year or a range of years; write year:2020, year:2019..2022 "
                         "or year:>=2019")
    low, high, op, year = found.groups()
    if low is not None:
        low, high = sorted((int(low), int(high)))
        return [Filter.parse(f"year>={low}"), Filter.parse(f"year<={high}")]
    return [Filter.parse(f"year{op or '='}{year}")]
