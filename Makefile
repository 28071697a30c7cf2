# One environment for everything, installed from the lock: torch 2.13.0 (CPU) and every other package at
# the version and hash in requirements/*.lock, then the project itself without dependencies.
VENV ?= .venv
PY := $(VENV)/bin/python
BIN := $(VENV)/bin
LOCK_TOOL := .lock-tool
COMPILE = $(LOCK_TOOL)/bin/pip-compile -q --generate-hashes --allow-unsafe --strip-extras --no-emit-index-url \
	--no-emit-find-links -c requirements/torch.txt

.PHONY: demo test quick bench install lock check-lock clean

$(VENV)/.installed: pyproject.toml requirements/test.lock
	python3 -m venv $(VENV)
	$(PY) -m pip install -q --require-hashes --no-deps -r requirements/test.lock
	$(PY) -m pip install -q --no-deps --no-build-isolation -e .
	$(PY) -m pip check
	touch $@

install: $(VENV)/.installed

demo: $(VENV)/.installed
	$(BIN)/embedsearch info
	$(BIN)/embedsearch search "discrete diffusion with continuous-time Markov chains" -k 5
	$(BIN)/embedsearch search "vision-language-action robot policies" -k 5
	$(BIN)/embedsearch similar 001_d172d3709162399d:3 -k 3

# pytest-xdist workers (2 to 4, see tests/conftest.py); the Ray tests share one worker.
test: $(VENV)/.installed
	$(PY) -m pytest -q -n auto --dist loadgroup

# The first tier, for the edit-test loop: everything but the `system` tests (Ray, Chromium, Schemathesis,
# SIGKILL, the second CPU code path; tests/conftest.py marks them).
quick: $(VENV)/.installed
	$(PY) -m pytest -q -n auto --dist loadgroup -m "not system"

# The benchmarks' comparison libraries (semhash, txtai's API) are not needed by the tests.
$(VENV)/.bench-installed: $(VENV)/.installed requirements/bench.lock
	$(PY) -m pip install -q --require-hashes --no-deps -r requirements/bench.lock
	touch $@

# The quick set (a few minutes here); each benchmark's full command is in benchmarks/HISTORY.md.
bench: $(VENV)/.bench-installed
	$(PY) -m benchmarks.search_bench
	$(PY) -m benchmarks.segments_bench --sizes 20000
	$(PY) -m benchmarks.score_bands_bench

# Re-resolve every pin on purpose (pip-tools; torch held at 2.13.0 CPU by requirements/torch.txt).
lock:
	python3 -m venv $(LOCK_TOOL)
	$(LOCK_TOOL)/bin/pip install -q pip-tools==7.6.2
	$(COMPILE) --upgrade --extra serve --extra test --extra ray --extra cluster -o requirements/test.lock pyproject.toml
	$(COMPILE) --upgrade --extra serve --extra test --extra ray --extra cluster --extra bench -c requirements/test.lock \
		-o requirements/bench.lock pyproject.toml

# Every dependency pyproject.toml names is pinned in the locks (also a test: tests/project/test_lock.py).
check-lock:
	python3 tests/project/test_lock.py

clean:
	rm -rf $(VENV) $(LOCK_TOOL) indexes/neurips2026
