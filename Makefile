# The two set-up commands of the README: `make demo` and `make test`.
# Both create a local virtual environment (.venv) and install what they need into it.
# docs/development.md describes every target.

PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
# The fast lane: the pure-logic tests (no apt, no servers, no Docker, no long simulations,
# no process per case).
FAST_LANE := not server and not docker and not slow and not browser and not processes

.PHONY: demo test test-fast test-suite install install-test system-deps server-roots \
	docker-ready lint \
	bench docs clean

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

# MySQL 9.7 (Debian sid) and MariaDB 11.8 (Debian 13) do not run on this host's release:
# each is installed into a Debian root of its own, once, kept under $(SERVER_ROOTS) — the
# lab's local backend runs it there in a chroot (`lab run --server-root mysql-9.7`) and
# its Docker image is made of the same root. Under CI=true a failure fails the run;
# elsewhere the tests that need them skip, with a loud reason.
SERVER_ROOTS ?= /var/lib/innoflush/roots
NEW_SERVERS := mysql-9.7 mariadb-11.8
server-roots: system-deps
	@for s in $(NEW_SERVERS); do \
	  bash docker/build-offline-image.sh --server $$s --keep-root $(SERVER_ROOTS)/$$s \
	    --root-only --if-missing || { echo "!!! THE $$s SERVER ROOT COULD NOT BE BUILT$$( \
	      [ "$$CI" = true ] && echo ': CI=true, failing' || echo ': its tests will be skipped')" >&2; \
	    [ "$$CI" != true ] || exit 1; }; \
	done

# The lab's Docker tests need an engine and images: dockerd is started when none answers
# (scripts/docker-engine.sh: vfs, no bridge, no iptables), and the offline images
# innoflush/mariadb:10.11-offline, innoflush/mysql:9.7-offline and
# innoflush/mariadb:11.8-offline are built from Debian's packages once (the last two from
# the roots above) — kept on the engine, so later runs skip them (docker rmi one to build it
# again). Under CI=true a failure here fails the run; elsewhere the Docker tests skip, with a
# loud reason.
docker-ready: server-roots
	@bash scripts/docker-engine.sh start && bash docker/build-offline-image.sh --if-missing \
	  && for s in $(NEW_SERVERS); do bash docker/build-offline-image.sh --server $$s \
	       --keep-root $(SERVER_ROOTS)/$$s --if-missing || exit 1; done \
	  || { echo "!!! DOCKER IS NOT READY for the lab's Docker tests (see above)$$( \
	       [ "$$CI" = true ] && echo ': CI=true, failing' || echo ': they will be skipped')" >&2; \
	       [ "$$CI" != true ]; }

demo: install
	bash scripts/demo.sh $(BIN)/innoflush

# ruff everywhere; mypy on the packages that are kept type-clean ([tool.mypy] in
# pyproject.toml: the modules they import are read for their types only).
lint: install-test
	$(BIN)/ruff check innoflush tests bench scripts
	$(BIN)/mypy innoflush/simulator innoflush/profiles innoflush/live

# The full suite, as CI runs it (.ci/run). A dockerd that docker-ready starts for this run
# is stopped afterwards (with its containerd), also when pytest fails or is interrupted,
# and pytest's exit status is kept; an engine that was already running is left alone.
test: install-test system-deps lint
	bash scripts/docker-engine.sh run $(MAKE) --no-print-directory docker-ready test-suite

# Every test, with whatever servers and engine there are (`make test` prepares them).
test-suite: install-test
	$(BIN)/python -m pytest -q -ra

# The pure-logic tests, in well under a minute: nothing to install but the venv.
test-fast: install-test
	$(BIN)/python -m pytest -q -m "$(FAST_LANE)"

bench: install-test
	$(BIN)/python bench/sim_speed.py
	$(BIN)/python bench/measure_vs_fio.py

# Regenerate the generated blocks of README.md and docs/ (options tables from the CLI,
# examples from real runs: a MariaDB from this host's binaries, Docker when an engine
# answers). `scripts/make_docs.py --check` checks the cheap blocks without running anything.
docs: install
	$(BIN)/python scripts/advisor_rules_doc.py
	$(BIN)/python scripts/make_docs.py

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache .ruff_cache .mypy_cache
