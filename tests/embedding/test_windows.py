import numpy as np

from embedsearch.embedding.windows import pool_windows, split_texts, window_spans


def offsets(n):
    return [(i * 2, i * 2 + 1) for i in range(n)]


def test_short_text_is_one_window():
    assert window_spans(offsets(10), max_tokens=254, max_windows=8) == [(0, 19, 10)]


def test_long_text_keeps_the_truncated_reading_first_then_the_tail():
    spans = window_spans(offsets(300), max_tokens=254, max_windows=8)
    assert [s[2] for s in spans] == [254, 46]
    assert spans[0] == (0, offsets(300)[253][1], 254)
    assert spans[-1][1] == offsets(300)[-1][1] and spans[0][1] < spans[1][0]


def test_window_cap_and_truncate_mode():
    assert len(window_spans(offsets(5000), max_tokens=254, max_windows=4)) == 4
    assert window_spans(offsets(300), max_tokens=254, max_windows=1) == [(0, 599, 254)]


def test_split_and_pool_weight_tails_down():
    text = "x " * 300
    pieces, owners, weights = split_texts([text, "short"], [offsets(300), [(0, 5)]], 254, 8, tail_weight=0.25)
    assert owners == [0, 0, 1] and weights == [254, 46 * 0.25, 1]
    assert pieces[2] == "short" and pieces[0] == text[: offsets(300)[253][1]]
    vectors = np.array([[1, 0], [0, 1], [1, 0]], dtype=np.float32)
    pooled = pool_windows(vectors, owners, weights, 2)
    expected = np.array([254, 11.5]) / np.hypot(254, 11.5)
    np.testing.assert_allclose(pooled, [expected, [1, 0]], atol=1e-6)
