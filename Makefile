# The two set-up commands of the README: `make demo` and `make test`.
# Both create a local virtual environment (.venv) and install what they need into it.

PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin

.PHONY: demo test install install-test system-deps lint bench clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip

$(VENV)/.installed: $(BIN)/python setup.cfg pyproject.toml
	$(BIN)/python -m pip install -q -e .
	touch $@

$(VENV)/.installed-test: $(VENV)/.installed
	$(BIN)/python -m pip install -q -e '.[test]'
	touch $@

install: $(VENV)/.installed

install-test: $(VENV)/.installed-test

# Real tools the tests use (fio, mariadb-server): installed with apt when missing.
system-deps:
	bash scripts/install-system-deps.sh

demo: install
	bash scripts/demo.sh $(BIN)/innoflush

lint: install-test
	$(BIN)/ruff check innoflush tests bench

test: install-test system-deps lint
	$(BIN)/python -m pytest -q -ra

bench: install-test
	$(BIN)/python bench/sim_speed.py
	$(BIN)/python bench/measure_vs_fio.py

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache .ruff_cache
