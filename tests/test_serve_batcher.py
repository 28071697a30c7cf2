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
    inner = Recording()
    encoder = BatchingEncoder(inner)
    stop = threading.Event()

    def check_forever():
        while not stop.is_set():
            assert encoder.encode(["checked " * 80])[0, 0] == len("checked " * 80)

    checkers = [threading.Thread(target=check_forever, daemon=True) for _ in range(4)]
    for t in checkers:
        t.start()
    time.sleep(0.05)
    added: list[np.ndarray] = []
    adder = threading.Thread(target=lambda: added.append(encoder.encode([f"added {i} " * 80 for i in range(20)])))
    adder.start()
    adder.join(timeout=10)
    finished_under_load = not adder.is_alive()
    stop.set()
    for t in [adder, *checkers]:
        t.join()
    assert finished_under_load, "the add waited for the duplicate checks to stop"
    np.testing.assert_array_equal(added[0][:, 0], [len(f"added {i} " * 80) for i in range(20)])
    query = encoder.encode(["a short query"])
    assert query.tolist() == [[13.0, 1.0]] and inner.calls[-1] == ["a short query"]
