# navd: the two commands a newcomer needs are `make quickstart` and `make test`.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
NAVD   := $(BIN)/navd
# the real OpenLineage emitters the tests run (dbt-ol, Airflow), in a venv of their own
EMITTERS := .venv-emitters
# pip's and apt's output: kept here, out of the terminal; a step that fails names it.
SETUP_LOG := $(VENV)/setup.log

.PHONY: setup setup-test prerequisites krb5-packages browser test test-fast docs fuzz quickstart bench chaos outages compare-openlineage dev-up dev-down clean vendor-js

# The set-up recipes' shell function `logged "what it does" command args...`: one line of progress
# on the terminal, the command's output appended to $(SETUP_LOG); when the command fails, the log's
# last lines and its name, and the recipe fails with the command's exit code.
LOGGED = logged() { what=$$1; shift; echo "setup: $$what"; mkdir -p $(VENV); \
	"$$@" >>$(SETUP_LOG) 2>&1 || { rc=$$?; echo "setup: $$what failed (exit $$rc); the end of $(SETUP_LOG):" >&2; \
	tail -n 15 $(SETUP_LOG) >&2; return $$rc; }; };
# apt-get as root, waiting for another apt's lock; the package lists are updated only when the
# first try fails (a fresh container has none)
APT_INSTALL = env DEBIAN_FRONTEND=noninteractive sh -c 'apt="apt-get -q -o DPkg::Lock::Timeout=600"; \
	$$apt install -y "$$@" || { $$apt update && $$apt install -y "$$@"; }' apt-install

# The main job's set-up (`make quickstart`): navd and its runtime dependencies in .venv, and the
# Solr jars (`navd solr fetch`; at once when they are cached). Nothing of the tests: no test tools,
# no browser, no KDC. Idempotent: the venv's install is redone only when pyproject.toml changes.
setup: $(VENV)/.installed
	@$(LOGGED) logged "the Solr jars (from Maven Central into ~/.cache/navd on first use, about 85 MB)" \
		$(NAVD) solr fetch

# What the tests, benchmarks and the dev stack add: the test extra (with the kerberos extra),
# the dev services (deploy/dev, distribution navd-devstack: beside navd, never inside it; `pip
# install .` of navd does not install them), Debian's Chromium and MIT Kerberos.
setup-test: setup $(VENV)/.installed-test browser $(EMITTERS)/.installed

# The real OpenLineage emitters the tests run (dbt-ol over dbt-duckdb, Airflow 3 with its OpenLineage provider): a venv of their own, since
# their dependency trees pin what navd's venv cannot share (tests/emitters/requirements.txt).
$(EMITTERS)/.installed: tests/emitters/requirements.txt
	@$(LOGGED) test -x $(EMITTERS)/bin/python || logged "creating $(EMITTERS) (the emitters the tests run)" $(PYTHON) -m venv $(EMITTERS)
	@$(LOGGED) logged "installing dbt-ol with dbt-duckdb and Apache Airflow 3 into $(EMITTERS)" $(EMITTERS)/bin/pip install -r tests/emitters/requirements.txt
	@touch $@

# What navd needs from the host, checked before anything is installed: Python >= 3.11, a JDK 17+
# (java and javac, from JAVA_HOME or PATH, as navd looks them up) and Maven. Silent when all is there.
prerequisites:
	@$(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else "setup: navd needs Python >= 3.11, $(PYTHON) is " + sys.version.split()[0])'
	@for tool in java javac mvn; do \
	  if [ -n "$$JAVA_HOME" ] && [ -x "$$JAVA_HOME/bin/$$tool" ]; then continue; fi; \
	  command -v $$tool >/dev/null || { echo "setup: $$tool not found (nor in JAVA_HOME): navd's embedded Solr needs a JDK 17+ and Maven (the Debian packages openjdk-17-jdk-headless and maven)" >&2; exit 1; }; \
	done
	@javac=javac; if [ -n "$$JAVA_HOME" ] && [ -x "$$JAVA_HOME/bin/javac" ]; then javac="$$JAVA_HOME/bin/javac"; fi; \
	major=$$("$$javac" -version 2>&1 | sed -n 's/^javac \([0-9][0-9]*\).*/\1/p'); \
	[ "$${major:-0}" -ge 17 ] || { echo "setup: $$javac is $$("$$javac" -version 2>&1 | head -n 1): navd's embedded Solr needs a JDK 17+" >&2; exit 1; }

$(VENV)/.installed: pyproject.toml | prerequisites
	@$(LOGGED) test -x $(BIN)/python || logged "creating $(VENV)" $(PYTHON) -m venv $(VENV)
	@$(LOGGED) logged "updating pip" $(BIN)/pip install --upgrade pip
	@$(LOGGED) logged "installing navd and its dependencies into $(VENV) (PySpark is about 450 MB: minutes the first time)" \
		$(BIN)/pip install -e .
	@touch $@

$(VENV)/.installed-test: $(VENV)/.installed deploy/dev/pyproject.toml | krb5-packages
	@$(LOGGED) logged "installing the test tools and the dev services into $(VENV)" \
		$(BIN)/pip install -e '.[test]' -e deploy/dev
	@touch $@

# The browser tests (tests/test_page.py) and the page benchmark drive Debian's Chromium: installed
# here when missing (as root), else one line saying what to install. A missing browser fails them.
browser:
	@test -x /usr/bin/chromium && exit 0; \
	if [ "$$(id -u)" != 0 ]; then \
	  echo "setup: the browser tests need /usr/bin/chromium: run 'sudo apt-get install -y chromium'" >&2; exit 1; fi; \
	$(LOGGED) logged "installing Debian's chromium (the browser tests)" $(APT_INSTALL) chromium

# MIT Kerberos from Debian: libkrb5-dev's headers and krb5-config build the gssapi binding (the
# kerberos extra, part of the test install: gssapi publishes no wheels for Linux); krb5-kdc
# (krb5kdc, kdb5_util), krb5-admin-server (kadmin.local) and krb5-user (kinit) run the tests' own
# KDC (deploy/dev/navd_devstack/kdc.py). Installed when missing and run as root; otherwise one
# line naming them. Nothing is configured system-wide: the KDC keeps its files in a temp dir.
KRB5_PACKAGES := libkrb5-dev krb5-kdc krb5-admin-server krb5-user
KRB5_TOOLS    := krb5-config krb5kdc kdb5_util kadmin.local kinit
krb5-packages:
	@missing=$$(for tool in $(KRB5_TOOLS); do PATH="$$PATH:/usr/sbin:/sbin" command -v $$tool >/dev/null || echo $$tool; done); \
	if [ -z "$$missing" ]; then exit 0; fi; \
	if [ "$$(id -u)" != 0 ] || ! command -v apt-get >/dev/null; then \
		echo "setup: missing $$(echo $$missing): install the Debian packages $(KRB5_PACKAGES) (as root: apt-get install $(KRB5_PACKAGES))" >&2; exit 1; fi; \
	$(LOGGED) logged "installing $(KRB5_PACKAGES) (the Kerberos tests; missing: $$(echo $$missing))" \
		$(APT_INSTALL) --no-install-recommends $(KRB5_PACKAGES)

test: setup-test
	$(BIN)/pytest $(PYTEST_ARGS)

# The tests that need no service (marked `pure` by tests/conftest.py: no service fixture, no
# `services` mark), run where no service can start: one that starts one anyway fails, naming it.
test-fast: $(VENV)/.installed-test
	$(BIN)/pytest -m pure $(PYTEST_ARGS)

# The parsers' fuzz targets at full length (tests/fuzz/README.md): FUZZ_EXAMPLES inputs per target,
# random seed, per-target counts printed at the end. `make test` runs a fixed-seed slice of them.
# FUZZ_MEMORY_KB caps the run's virtual memory (the API target's Solr JVM included), so an input
# that blows up a parser's memory fails the run instead of the host's OOM killer ending others.
FUZZ_EXAMPLES ?= 10000
FUZZ_MEMORY_KB ?= 8000000
fuzz: setup-test
	ulimit -v $(FUZZ_MEMORY_KB) && FUZZ_EXAMPLES=$(FUZZ_EXAMPLES) $(BIN)/pytest tests/fuzz -p no:cacheprovider $(PYTEST_ARGS)

quickstart: setup
	$(NAVD) quickstart

# docs/reference/{cli,config,http}.md from the argparse parser, the config dataclasses and the
# server's OpenAPI description (navd/docs.py); tests/test_docs.py fails when they are out of date.
docs: $(VENV)/.installed
	$(BIN)/python -m navd.docs

# bench_linker.py prints its figures: saved in .bench/linker.log for tests/bench/summary.py, which
# prints the table of every pipeline against its goal last (dash has no pipefail, hence the rc file).
bench: setup-test
	$(BIN)/python tests/bench/bench_writer.py
	$(BIN)/python tests/bench/bench_spark.py
	$(BIN)/python tests/bench/bench_hdfs.py
	$(BIN)/python tests/bench/bench_s3.py
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
chaos: setup-test
	CHAOS_KILLS=$(CHAOS_KILLS) CHAOS_SEED=$(CHAOS_SEED) $(BIN)/pytest tests/test_chaos.py -s -q $(PYTEST_ARGS)

# The outage campaign (tests/test_outages.py): Solr down OUTAGE_SECONDS (5 minutes) under `navd run`
# with every extractor and the OpenLineage intake active, compared with clean runs; then each source
# (NameNode, HiveServer2, ResourceManager) down in turn. `make test` runs them with a 20 s outage.
OUTAGE_SECONDS ?= 300
outages: setup-test
	OUTAGE_SECONDS=$(OUTAGE_SECONDS) $(BIN)/pytest tests/test_outages.py tests/test_source_outages.py -s -q $(PYTEST_ARGS)

# A report, not a test: navd's column edges against the OpenLineage Spark listener's on the same
# runs (tests/bench/README.md). `make compare-openlineage CASES=column_usage,multi_insert` for a subset.
compare-openlineage: setup-test
	$(BIN)/python tests/bench/compare_openlineage.py $(if $(CASES),--cases $(CASES))

dev-up: setup-test
	$(BIN)/python deploy/dev/devstack.py up

dev-down: setup-test
	$(BIN)/python deploy/dev/devstack.py down

clean:
	rm -rf $(VENV) $(EMITTERS) .pytest_cache .bench build *.egg-info deploy/dev/build deploy/dev/*.egg-info

# The lineage page's JavaScript (cytoscape, elkjs: its API and its web-worker build), pinned in web/package-lock.json,
# copied with their licences into the package and committed: edge nodes are often air-gapped,
# so neither a build nor `pip install` fetches anything from npm.
VENDOR := navd/server/static/vendor
vendor-js:
	cd web && npm ci --no-audit --no-fund
	mkdir -p $(VENDOR)
	cp web/node_modules/cytoscape/dist/cytoscape.min.js $(VENDOR)/cytoscape.min.js
	cp web/node_modules/cytoscape/LICENSE $(VENDOR)/cytoscape.LICENSE.txt
	cp web/node_modules/elkjs/lib/elk-api.js $(VENDOR)/elk-api.js
	cp web/node_modules/elkjs/lib/elk-worker.min.js $(VENDOR)/elk-worker.min.js
	cp web/node_modules/elkjs/LICENSE.md $(VENDOR)/elkjs.LICENSE.md
	cd web && node -e 'const l=require("./package-lock.json").packages;for(const n of ["cytoscape","elkjs"])console.log(n, l["node_modules/"+n].version, l["node_modules/"+n].license)' > ../$(VENDOR)/VERSIONS.txt
