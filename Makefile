# navd: the two commands a newcomer needs are `make quickstart` and `make test`.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
NAVD   := $(BIN)/navd

.PHONY: setup krb5-packages browser test test-fast docs fuzz quickstart bench chaos outages compare-openlineage dev-up dev-down clean vendor-js

# Idempotent: the venv and the editable installs are redone only when a pyproject.toml changes;
# `navd solr fetch` returns at once when the Solr jars are already cached.
setup: $(VENV)/.installed browser
	$(NAVD) solr fetch

# The browser tests (tests/test_page.py) and the page benchmark drive Debian's Chromium: installed
# here when missing (as root), else one line saying what to install. A missing browser fails them.
browser:
	@test -x /usr/bin/chromium || { \
	  if [ "$$(id -u)" = 0 ]; then apt-get update -q && apt-get install -y -q chromium; \
	  else echo "make setup: the browser tests need /usr/bin/chromium: run 'sudo apt-get install -y chromium'" >&2; exit 1; fi; }

# The dev services (deploy/dev, distribution navd-devstack) install beside navd, never inside it:
# `make dev-up`, the tests and the benchmarks need them; `pip install .` of navd does not.
$(VENV)/.installed: pyproject.toml deploy/dev/pyproject.toml | krb5-packages
	$(PYTHON) -c 'import sys; assert sys.version_info >= (3, 11), "navd needs Python >= 3.11"'
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[test]' -e deploy/dev
	touch $@

# MIT Kerberos from Debian: libkrb5-dev's headers and krb5-config build the gssapi binding (the
# kerberos extra, part of the test install); krb5-kdc (krb5kdc, kdb5_util), krb5-admin-server
# (kadmin.local) and krb5-user (kinit) run the tests' own KDC (deploy/dev/navd_devstack/kdc.py).
# Installed when missing and run as root (the lock wait: another apt may be running); otherwise
# one line naming them. Nothing is configured system-wide: the KDC keeps its files in a temp dir.
KRB5_PACKAGES := libkrb5-dev krb5-kdc krb5-admin-server krb5-user
KRB5_TOOLS    := krb5-config krb5kdc kdb5_util kadmin.local kinit
krb5-packages:
	@missing=$$(for tool in $(KRB5_TOOLS); do PATH="$$PATH:/usr/sbin:/sbin" command -v $$tool >/dev/null || echo $$tool; done); \
	if [ -z "$$missing" ]; then exit 0; fi; \
	if [ "$$(id -u)" != 0 ] || ! command -v apt-get >/dev/null; then \
		echo "make setup: missing $$(echo $$missing): install the Debian packages $(KRB5_PACKAGES) (as root: apt-get install $(KRB5_PACKAGES))" >&2; exit 1; fi; \
	echo "make setup: installing $(KRB5_PACKAGES) (missing: $$(echo $$missing))"; \
	export DEBIAN_FRONTEND=noninteractive; \
	apt-get install -y -q -o DPkg::Lock::Timeout=600 --no-install-recommends $(KRB5_PACKAGES) >/dev/null \
		|| { apt-get update -q -o DPkg::Lock::Timeout=600 >/dev/null && \
		     apt-get install -y -q -o DPkg::Lock::Timeout=600 --no-install-recommends $(KRB5_PACKAGES) >/dev/null; } \
		|| { echo "make setup: apt-get could not install $(KRB5_PACKAGES)" >&2; exit 1; }

test: setup
	$(BIN)/pytest $(PYTEST_ARGS)

# The tests that need no service (marked `pure` by tests/conftest.py: no service fixture, no
# `services` mark), run where no service can start: one that starts one anyway fails, naming it.
test-fast: $(VENV)/.installed
	$(BIN)/pytest -m pure $(PYTEST_ARGS)

# The parsers' fuzz targets at full length (tests/fuzz/README.md): FUZZ_EXAMPLES inputs per target,
# random seed, per-target counts printed at the end. `make test` runs a fixed-seed slice of them.
# FUZZ_MEMORY_KB caps the run's virtual memory (the API target's Solr JVM included), so an input
# that blows up a parser's memory fails the run instead of the host's OOM killer ending others.
FUZZ_EXAMPLES ?= 10000
FUZZ_MEMORY_KB ?= 8000000
fuzz: setup
	ulimit -v $(FUZZ_MEMORY_KB) && FUZZ_EXAMPLES=$(FUZZ_EXAMPLES) $(BIN)/pytest tests/fuzz -p no:cacheprovider $(PYTEST_ARGS)

quickstart: setup
	$(NAVD) quickstart

# docs/reference/{cli,config,http}.md from the argparse parser, the config dataclasses and the
# server's OpenAPI description (navd/docs.py); tests/test_docs.py fails when they are out of date.
docs: $(VENV)/.installed
	$(BIN)/python -m navd.docs

# bench_linker.py prints its figures: saved in .bench/linker.log for tests/bench/summary.py, which
# prints the table of every pipeline against its goal last (dash has no pipefail, hence the rc file).
bench: setup
	$(BIN)/python tests/bench/bench_writer.py
	$(BIN)/python tests/bench/bench_spark.py
	$(BIN)/python tests/bench/bench_hdfs.py
	$(BIN)/python tests/bench/bench_hms.py
	mkdir -p .bench
	{ $(BIN)/python -u tests/bench/bench_linker.py; echo $$? > .bench/linker.rc; } 2>&1 | tee .bench/linker.log; \
		exit "$$(cat .bench/linker.rc)"
	$(BIN)/python tests/bench/bench_api.py
	$(BIN)/python tests/bench/bench_lineage.py
	$(BIN)/python tests/bench/bench_page.py
	$(BIN)/python tests/bench/bench_openlineage.py
	$(BIN)/python tests/bench/bench_lineage_logs.py
	$(BIN)/python tests/bench/bench_sensitivity.py
	$(BIN)/python tests/bench/soak.py --minutes 10
	$(BIN)/python tests/bench/summary.py

# The kill -9 campaign (tests/chaos.py): CHAOS_KILLS kill points per component that writes (6
# over 9 components: 54; Spark tail, Impala and Hive lineage logs, purge, HDFS, YARN, HMS, linker,
# OpenLineage intake), each round restarted to completion and compared document by document with
# a clean run; `make test` runs the same tests with 2 kill points each.
CHAOS_KILLS ?= 6
CHAOS_SEED  ?= 24
chaos: setup
	CHAOS_KILLS=$(CHAOS_KILLS) CHAOS_SEED=$(CHAOS_SEED) $(BIN)/pytest tests/test_chaos.py -s -q $(PYTEST_ARGS)

# The outage campaign (tests/test_outages.py): Solr down OUTAGE_SECONDS (5 minutes) under `navd run`
# with every extractor and the OpenLineage intake active, compared with clean runs; then each source
# (NameNode, HiveServer2, ResourceManager) down in turn. `make test` runs them with a 20 s outage.
OUTAGE_SECONDS ?= 300
outages: setup
	OUTAGE_SECONDS=$(OUTAGE_SECONDS) $(BIN)/pytest tests/test_outages.py tests/test_source_outages.py -s -q $(PYTEST_ARGS)

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

# The lineage page's JavaScript (cytoscape, cytoscape-elk, elkjs), pinned in web/package-lock.json,
# copied with their licences into the package and committed: edge nodes are often air-gapped,
# so neither a build nor `pip install` fetches anything from npm.
VENDOR := navd/server/static/vendor
vendor-js:
	cd web && npm ci --no-audit --no-fund
	mkdir -p $(VENDOR)
	cp web/node_modules/cytoscape/dist/cytoscape.min.js $(VENDOR)/cytoscape.min.js
	cp web/node_modules/cytoscape/LICENSE $(VENDOR)/cytoscape.LICENSE.txt
	cp web/node_modules/cytoscape-elk/dist/cytoscape-elk.js $(VENDOR)/cytoscape-elk.js
	cp web/node_modules/cytoscape-elk/LICENSE $(VENDOR)/cytoscape-elk.LICENSE.txt
	cp web/node_modules/elkjs/lib/elk.bundled.js $(VENDOR)/elk.bundled.js
	cp web/node_modules/elkjs/LICENSE.md $(VENDOR)/elkjs.LICENSE.md
	cd web && node -e 'const l=require("./package-lock.json").packages;for(const n of ["cytoscape","cytoscape-elk","elkjs"])console.log(n, l["node_modules/"+n].version, l["node_modules/"+n].license)' > ../$(VENDOR)/VERSIONS.txt
