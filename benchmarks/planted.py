"""Planted near-duplicates over real abstracts: the edit kinds chairs see, plus hard negatives
(different papers that recycle the same two background sentences)."""

from __future__ import annotations

import random
import re

from embedsearch import Document

SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9])")
PHRASES = [("we show", "we demonstrate"), ("we found", "we observed"), ("results", "findings"),
           ("significantly", "markedly"), ("method", "approach"), ("however", "nevertheless"),
           ("in this study", "here"), ("associated with", "linked to"), ("increased", "elevated"),
           ("decreased", "reduced"), ("patients", "subjects"), ("suggest", "indicate"), ("using", "by means of"),
           ("important", "key"), ("demonstrate", "establish"), ("role", "function"), ("analysis", "examination"),
           ("novel", "new"), ("previously", "earlier"), ("identified", "detected"), ("investigated", "examined"),
           ("mechanism", "pathway"), ("observed", "seen"), ("revealed", "showed"), ("cells", "cell populations"),
           ("therefore", "thus"), ("in addition", "moreover"), ("expression", "levels"), ("effect", "impact"),
           ("compared with", "relative to"), ("the", "this"), ("these", "such"), ("and", "as well as")]
KINDS = ("reordered", "reworded", "numbers", "dropped", "added", "whitespace-case", "shortened", "new-opening")


def sentences(text: str) -> list[str]:
    return SENTENCE.split(text.strip())


def reword(text: str, rng: random.Random) -> str:
    out = text
    for old, new in PHRASES:
        if rng.random() < 0.85:
            out = re.sub(rf"\b{old}\b", new, out, flags=re.IGNORECASE)
    parts = sentences(out)
    if len(parts) >= 3:
        i = rng.randrange(len(parts) - 1)
        parts[i], parts[i + 1] = parts[i + 1], parts[i]
    return " ".join(parts)


def edit(text: str, kind: str, rng: random.Random, donor: str) -> str:
    parts = sentences(text)
    if kind == "reordered":
        shuffled = parts[:]
        while len(parts) > 1 and shuffled == parts:
            rng.shuffle(shuffled)
        return " ".join(shuffled)
    if kind == "reworded":
        return reword(text, rng)
    if kind == "numbers":
        return re.sub(r"\d+(?:\.\d+)?", lambda m: str(round(float(m.group()) * rng.uniform(1.2, 3) + 1, 1)), text)
    if kind == "dropped":
        drop = rng.randrange(1, len(parts)) if len(parts) > 1 else 0
        return " ".join(p for i, p in enumerate(parts) if i != drop)
    if kind == "added":
        extra = rng.choice(sentences(donor))
        at = rng.randrange(len(parts) + 1)
        return " ".join(parts[:at] + [extra] + parts[at:])
    if kind == "whitespace-case":
        words = text.split(" ")
        words = [w.upper() if rng.random() < 0.1 else (w.lower() if rng.random() < 0.2 else w) for w in words]
        return "  ".join(words).replace(". ", ".\n").replace(",", " ,")
    if kind == "shortened":
        keep = max(1, round(len(parts) * 0.6))
        return " ".join(parts[:keep])
    if kind == "new-opening":
        return " ".join([rng.choice(sentences(donor))] + parts[1:])
    raise ValueError(kind)


def plant(documents: list[Document], bases: list[int], negatives: list[tuple[int, int]], seed: int, tag: str
          ) -> tuple[list[Document], list[tuple[str, str, str]], list[Document], list[tuple[str, str]]]:
    """Variants of each base (id ``{tag}:{base}:{kind}``), and background-sharing versions of negative pairs.

    Returns (variants, true pairs with their kind, negative documents, negative pairs).
    """
    rng = random.Random(seed)
    variants, truth = [], []
    for b in bases:
        doc = documents[b]
        donor = documents[rng.randrange(len(documents))].text
        for kind in KINDS:
            text = edit(doc.text, kind, rng, donor)
            if text.strip() and text != doc.text:
                variant = Document(f"{tag}:{doc.id}:{kind}", text)
                variants.append(variant)
                truth.append((doc.id, variant.id, kind))
    negative_docs, negative_pairs = [], []
    for x, y in negatives:
        background = " ".join(sentences(documents[rng.randrange(len(documents))].text)[:2])
        pair = []
        for side in (x, y):
            d = documents[side]
            pair.append(Document(f"{tag}:bg:{d.id}", f"{background} {d.text}", d.title))
        negative_docs.extend(pair)
        negative_pairs.append((pair[0].id, pair[1].id))
    return variants, truth, negative_docs, negative_pairs
