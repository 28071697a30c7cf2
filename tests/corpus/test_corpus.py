import json

import pytest

from embedsearch.corpus import Document, FieldMap, bundled_sources, read_sources
from embedsearch.errors import InputError


def write(path, content, mode="w"):
    if mode == "wb":
        path.write_bytes(content)
    else:
        path.write_text(content, encoding="utf-8")
    return path


def test_bundled_seed_files_give_57_abstracts_with_stem_line_ids():
    docs = read_sources(bundled_sources()).documents
    assert len(docs) == 57
    assert docs[0].id == "000_bb58e7a7d5c95935:3"
    assert docs[0].title is None
    assert docs[0].metadata == {"collection": "NeurIPS 2026 Papers"}
    assert docs[0].text.startswith("Partitioned routed distillation")


def test_jsonl_uses_id_title_and_keeps_other_fields_as_metadata(tmp_path):
    src = write(tmp_path / "c.jsonl", "\n".join(json.dumps(r) for r in [
        {"id": "p1", "title": "Alpha", "abstract": "First abstract.", "year": 2024},
        {"id": "p2", "title": None, "abstract": "Second abstract.", "year": 2025}]) + "\n\n")
    docs = read_sources([src]).documents
    assert [(d.id, d.title, d.text, d.metadata) for d in docs] == [
        ("p1", "Alpha", "First abstract.", {"year": 2024}), ("p2", None, "Second abstract.", {"year": 2025})]


def test_named_fields_override_detection(tmp_path):
    src = write(tmp_path / "c.jsonl", json.dumps({"key": 7, "name": "T", "body_text": "Words here."}) + "\n")
    doc = read_sources([src], FieldMap("key", "name", "body_text")).documents[0]
    assert (doc.id, doc.title, doc.text) == ("7", "T", "Words here.")


def test_csv_and_parquet(tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    csv_src = write(tmp_path / "c.csv", 'id,title,abstract,venue\na,"A, title","Text, with comma",X\nb,,Plain text,Y\n')
    docs = read_sources([csv_src]).documents
    assert [(d.id, d.title, d.text, d.metadata["venue"]) for d in docs] == [
        ("a", "A, title", "Text, with comma", "X"), ("b", None, "Plain text", "Y")]
    pq.write_table(pa.table({"paper_id": ["x", "y"], "text": ["One.", "Two."], "year": [2020, 2021]}),
                   tmp_path / "c.parquet")
    docs = read_sources([tmp_path / "c.parquet"]).documents
    assert [(d.id, d.text, d.metadata) for d in docs] == [("x", "One.", {"year": 2020}), ("y", "Two.", {"year": 2021})]


def test_rows_without_id_field_get_file_stem_and_line(tmp_path):
    src = write(tmp_path / "notes.jsonl", '{"text": "a"}\n{"text": "b"}\n')
    assert [d.id for d in read_sources([src]).documents] == ["notes:1", "notes:2"]


@pytest.mark.parametrize("name, content, message", [
    ("bad.jsonl", '{"id": "a", "text": "ok"}\n{"id": "b", "text": \n', r"bad.jsonl:2: invalid JSON"),
    ("bad.jsonl", '{"id": "a", "summary": "x"}\n', r"bad.jsonl:1: no text field"),
    ("bad.jsonl", '{"id": "a", "text": "   "}\n', r"bad.jsonl:1: empty text"),
    ("bad.jsonl", '{"id": "a", "text": "x"}\n{"id": "a", "text": "y"}\n', r"bad.jsonl:2: duplicate id 'a'"),
    ("bad.jsonl", '[1, 2]\n', r"bad.jsonl:1: expected a JSON object"),
    ("bad.csv", 'id,text\na,one\nb,two,three\n', r"bad.csv:3: expected 2 columns"),
    ("bad.txt", "Header\n\n\t \n", r"bad.txt: no documents"),
    ("empty.jsonl", "", r"empty.jsonl: no documents"),
    ("bad.xml", "<a/>", r"bad.xml: unknown format"),
])
def test_bad_input_names_file_and_line(tmp_path, name, content, message):
    src = write(tmp_path / name, content)
    with pytest.raises(InputError, match=message):
        read_sources([src])


def test_named_field_missing_is_reported(tmp_path):
    src = write(tmp_path / "c.jsonl", '{"id": "a", "text": "x"}\n')
    with pytest.raises(InputError, match=r"c.jsonl:1: missing text field 'abstract'"):
        read_sources([src], FieldMap(text_field="abstract"))


def test_non_utf8_bytes_are_reported_with_line(tmp_path):
    src = write(tmp_path / "c.jsonl", b'{"id": "a", "text": "fine"}\n{"id": "b", "text": "caf\xe9"}\n', "wb")
    with pytest.raises(InputError, match=r"c.jsonl:2: not valid UTF-8 \(byte 0xe9"):
        read_sources([src])
    csv_src = write(tmp_path / "c.csv", b"id,text\na,fine\nb,caf\xe9\n", "wb")
    with pytest.raises(InputError, match=r"c.csv:3: not valid UTF-8"):
        read_sources([csv_src])


def test_unreadable_parquet_and_directory(tmp_path):
    write(tmp_path / "x.parquet", "not parquet")
    with pytest.raises(InputError, match=r"x.parquet: not a readable Parquet file"):
        read_sources([tmp_path / "x.parquet"])
    with pytest.raises(InputError, match=r"is a directory"):
        read_sources([tmp_path])


def test_skip_invalid_keeps_good_rows_and_reports_the_rest(tmp_path):
    src = write(tmp_path / "c.jsonl", '{"id": "a", "text": "ok"}\n{oops\n{"id": "a", "text": "dup"}\n'
                                      '{"id": "b", "text": ""}\n{"id": "c", "text": "fine"}\n')
    result = read_sources([src], skip_invalid=True)
    assert [d.id for d in result.documents] == ["a", "c"]
    assert [str(p).split(": ")[0].rsplit("/", 1)[1] for p in result.skipped] == ["c.jsonl:2", "c.jsonl:3", "c.jsonl:4"]


@pytest.mark.parametrize("given, shown", [
    (r"We propose \textbf{Neural CTMC} with an \emph{exit rate}", "We propose Neural CTMC with an exit rate"),
    (r"perplexity $16.36$ (vs.\ GIDD $37.60$)", "perplexity 16.36 (vs. GIDD 37.60)"),
    (r"monolithically---through proxies, 16--128 steps", "monolithically—through proxies, 16–128 steps"),
    (r"as shown in \cite{marinov2021pareto} and Table~\ref{tab:main}", "as shown in [marinov2021pareto] and Table tab:main"),
    ("We introduce **Negation Neglect**, a phenomenon", "We introduce Negation Neglect, a phenomenon"),
    (r"$\lambda^\star\to 0$ and $O(\log t)$ regret", "λ^⋆→ 0 and O(log t) regret"),
    (r"improves by 95\% and 5% over R&D; costs $5 million, not $10 million; #1 at ~30 ms",
     "improves by 95% and 5% over R&D; costs $5 million, not $10 million; #1 at ~30 ms"),
    ("Plain text with no markup at all.", "Plain text with no markup at all."),
])
def test_readable_renders_latex_and_markdown_and_keeps_what_plain_text_means(given, shown):
    from embedsearch.corpus.readable import readable

    assert readable(given) == shown


@pytest.mark.parametrize("given, shown", [
    (r"over $\Q(\sqrt{5})$ we show \emph{this} --- so", r"over $\Q(\sqrt{5})$ we show this — so"),
    (r"$S_{\lambda+1/2}$ and $$\sum_{n=0}^\infty a_n$$ cost $5 million, not $10",
     r"$S_{\lambda+1/2}$ and $$\sum_{n=0}^\infty a_n$$ cost $5 million, not $10"),
    (r"where $(k_F a)^{-1} \ge 1$ holds", r"where $(k_F a)^{-1} \ge 1$ holds"),
])
def test_readable_for_a_page_keeps_math_as_its_source_for_the_page_to_typeset(given, shown):
    from embedsearch.corpus.readable import readable

    assert readable(given, keep_math=True) == shown


def test_readable_copies_leave_the_stored_document_as_given():
    doc = Document("a", r"We propose \emph{X}.", r"\textbf{Title}")
    assert doc.readable() == Document("a", "We propose X.", "Title") and doc.text == r"We propose \emph{X}."


def test_a_corpus_is_named_by_its_seed_header_or_its_file(tmp_path):
    from embedsearch.corpus import collection_name

    assert collection_name(bundled_sources()) == "NeurIPS 2026 Papers"
    assert collection_name([tmp_path / "submissions.jsonl"]) == "submissions"
    assert collection_name([tmp_path / "a.csv", tmp_path / "b.csv"]) == "a and 1 more"
