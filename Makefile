# One environment for everything: torch 2.13.0 (CPU) first, then the project.
VENV ?= .venv
PY := $(VENV)/bin/python
BIN := $(VENV)/bin

.PHONY: demo test bench install clean

$(VENV)/.installed: pyproject.toml
	python3 -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q torch==2.13.0
	$(PY) -m pip install -q -e '.[serve,test,ray]'
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

# The benchmarks' comparison libraries (semhash, txtai's API) are not needed by the tests.
$(VENV)/.bench-installed: $(VENV)/.installed
	$(PY) -m pip install -q -e '.[bench]'
	touch $@

bench: $(VENV)/.bench-installed
	$(PY) benchmarks/search_bench.py

clean:
	rm -rf $(VENV) indexes/neurips2026
