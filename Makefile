# navd: the two commands a newcomer needs are `make quickstart` and `make test`.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
NAVD   := $(BIN)/navd

.PHONY: setup test quickstart bench compare-openlineage dev-up dev-down clean

# Idempotent: the venv and the editable installs are redone only when a pyproject.toml changes;
# `navd solr fetch` returns at once when the Solr jars are already cached.
setup: $(VENV)/.installed
	$(NAVD) solr fetch

# The dev services (deploy/dev, distribution navd-devstack) install beside navd, never inside it:
# `make dev-up`, the tests and the benchmarks need them; `pip install .` of navd does not.
$(VENV)/.installed: pyproject.toml deploy/dev/pyproject.toml
	$(PYTHON) -c 'import sys; assert sys.version_info >= (3, 11), "navd needs Python >= 3.11"'
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[test]' -e deploy/dev
	touch $@

test: setup
	$(BIN)/pytest $(PYTEST_ARGS)

quickstart: setup
	$(NAVD) quickstart

bench: setup
	$(BIN)/python tests/bench/bench_writer.py
	$(BIN)/python tests/bench/bench_spark.py
	$(BIN)/python tests/bench/bench_hdfs.py
	$(BIN)/python tests/bench/bench_hms.py
	$(BIN)/python tests/bench/bench_linker.py
	$(BIN)/python tests/bench/bench_api.py

# A report, not a test: navd's column edges against the OpenLineage Spark listener's on the same
# runs (tests/bench/README.md). `make compare-openlineage CASES=column_usage,multi_insert` for a subset.
compare-openlineage: setup
	$(BIN)/python tests/bench/compare_openlineage.py $(if $(CASES),--cases $(CASES))

dev-up: setup
	$(BIN)/python deploy/dev/devstack.py up

dev-down: setup
	$(BIN)/python deploy/dev/devstack.py down

clean:
	rm -rf $(VENV) .pytest_cache .bench build *.egg-info deploy/dev/build deploy/dev/*.egg-info
