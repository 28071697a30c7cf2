"""The service's shared encoder: queries first, and neither duplicate checks nor adds starve each other."""

import threading
import time

import numpy as np

from embedsearch.serve.batcher import BatchingEncoder


class Recording:
    """Stands in for the model: each vector is (text length, 1); every call is remembered."""

    fingerprint, dimension = "test", 2

    def __init__(self):
        self.calls: list[list[str]] = []

    def encode(self, texts):
        self.calls.append(list(texts))
        time.sleep(0.005)
        return np.array([[len(t), 1.0] for t in texts], dtype=np.float32)


def test_an_add_keeps_moving_under_a_stream_of_duplicate_checks():
    """Four threads check duplicates without pause until the add is done; parts of the add and checks take
    turns, so at most one check runs between two parts of the add (no clock: the order of the model's calls)."""
    inner = Recording()
    encoder = BatchingEncoder(inner)
    stop, streaming = threading.Event(), threading.Semaphore(0)
    wrong: list[str] = []

    def check_forever():
        while not stop.is_set():
            vector = encoder.encode(["checked " * 80])
            if vector[0, 0] != len("checked " * 80):
                wrong.append(f"a check got {vector.tolist()}")
            streaming.release()

    checkers = [threading.Thread(target=check_forever, daemon=True) for _ in range(4)]
    for t in checkers:
        t.start()
    for _ in range(8):
        streaming.acquire()  # the stream is flowing before the add arrives
    added: list[np.ndarray] = []
    adder = threading.Thread(target=lambda: (added.append(encoder.encode([f"added {i} " * 80 for i in range(20)])),
                                             stop.set()), daemon=True)
    adder.start()
    adder.join(timeout=300)  # a guard against hanging only: the assertions below are about order
    assert not adder.is_alive(), "the add never finished under the stream of checks"
    for t in checkers:
        t.join()
    assert wrong == []
    np.testing.assert_array_equal(added[0][:, 0], [len(f"added {i} " * 80) for i in range(20)])
    kinds = ["add" if call[0].startswith("added") else "check" if call[0].startswith("checked") else "other"
             for call in inner.calls]
    first, last = kinds.index("add"), len(kinds) - 1 - kinds[::-1].index("add")
    parts, checks_between = kinds.count("add"), kinds[first:last].count("check")
    assert parts == 10 and 1 <= checks_between <= parts - 1, kinds[first:last + 1]
    query = encoder.encode(["a short query"])
    assert query.tolist() == [[13.0, 1.0]] and inner.calls[-1] == ["a short query"]
