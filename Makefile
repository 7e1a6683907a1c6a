# The two set-up commands of the README: `make demo` and `make test`.
# Both create a local virtual environment (.venv) and install what they need into it.

PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin

.PHONY: demo test install install-test system-deps docker-ready lint bench docs clean

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

# Real tools the tests use (fio, mariadb-server, docker.io, debootstrap): installed with
# apt when missing.
system-deps:
	bash scripts/install-system-deps.sh

# The lab's Docker tests need an engine and an image: dockerd is started when none answers
# (scripts/docker-engine.sh: vfs, no bridge, no iptables), and the offline MariaDB image
# innoflush/mariadb:10.11-offline is built from Debian's packages once — kept on the
# engine, so later runs skip it (docker rmi it to build it again). Under CI=true a failure
# here fails the run; elsewhere the Docker tests skip, with a loud reason.
docker-ready: system-deps
	@bash scripts/docker-engine.sh start && bash docker/build-offline-image.sh --if-missing \
	  || { echo "!!! DOCKER IS NOT READY for the lab's Docker tests (see above)$$( \
	       [ "$$CI" = true ] && echo ': CI=true, failing' || echo ': they will be skipped')" >&2; \
	       [ "$$CI" != true ]; }

demo: install
	bash scripts/demo.sh $(BIN)/innoflush

lint: install-test
	$(BIN)/ruff check innoflush tests bench

test: install-test system-deps docker-ready lint
	$(BIN)/python -m pytest -q -ra

bench: install-test
	$(BIN)/python bench/sim_speed.py
	$(BIN)/python bench/measure_vs_fio.py

# Regenerate the generated blocks of README.md and docs/ (options tables from the CLI,
# examples from real runs: a MariaDB from this host's binaries, Docker when an engine
# answers). `scripts/make_docs.py --check` checks the cheap blocks without running anything.
docs: install
	$(BIN)/python scripts/make_docs.py

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache .ruff_cache
