# Everyday commands. `make serve` and `make test` each do all their own set-up: the system
# packages they need (.ci/system-packages), a virtualenv in .venv/ made from PYTHON, and the
# project installed into it with its Cython extensions compiled in place.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
DATA_DIR ?= ../shared/data
ADDRESS_SOURCE ?= $(DATA_DIR)/nl-addresses.csv.zst
INDEX_DIR ?= indexes/nl
HOST ?= 127.0.0.1
PORT ?= 8000
export PIP_DISABLE_PIP_VERSION_CHECK := 1

.PHONY: system-packages system-packages-build install index serve test check test-full test-matrix wheel-test docs bench bench-index bench-baseline bench-compare eval asan lint clean

# The system packages: as root on Debian, what is missing is installed (nothing when all is
# there); otherwise one message names the command to run. `build`: the C compiler (and Python's
# headers and venv module); `test`: also redis-server, haproxy, chromium, chromedriver, npm, wrk.
system-packages:
	@bash .ci/system-packages test $(PYTHON)
system-packages-build:
	@bash .ci/system-packages build $(PYTHON)

STAMP := $(VENV)/.installed

install: $(STAMP)

$(PY): | system-packages-build
	$(PYTHON) -m venv $(VENV)

# (re)install when the build inputs change: compiles the Cython extensions in place
$(STAMP): pyproject.toml setup.py engine/*.pyx engine/*.pxd engine/*.pxi server/*.pyx server/*.pxd | system-packages-build $(PY)
	$(PY) -m pip install -q --upgrade pip setuptools wheel
	$(PY) -m pip install -q -e ".[server,test,docs]"
	touch $(STAMP)

# (re)build when the engine or the build changes (a change of build alone, such as more stored
# answers, would otherwise leave the old index served)
INDEX_INPUTS := $(wildcard engine/ingest/*.py) engine/files.py engine/params.py engine/vocab.py \
	engine/normalize.py engine/words.py

$(INDEX_DIR)/manifest.json: $(STAMP) $(INDEX_INPUTS)
	$(PY) -m engine build $(ADDRESS_SOURCE) $(INDEX_DIR)

index: install $(INDEX_DIR)/manifest.json

serve: index
	ADDRESS_INDEX=$(INDEX_DIR) $(PY) -m gunicorn -c server/gunicorn.conf.py -b $(HOST):$(PORT)

# the whole suite but the whole-country tests (make test-full): gunicorn, Redis, the cluster
# behind haproxy and the browser included
test: system-packages install
	ADDRESS_DATA_DIR=$(DATA_DIR) $(PY) -m pytest -m "not full"

# the fast loop: the engine and server tests that start no gunicorn, Redis, cluster or browser
# (not marked slow), on the sample index, on every core (pytest-xdist), and the import-cycle
# check with its tests; then ruff
check: install
	ADDRESS_DATA_DIR=$(DATA_DIR) $(PY) -m pytest -m "not full and not slow" -n auto -q tests/engine tests/server tests/test_import_cycles.py
	$(PY) tests/import_cycles.py engine server
	$(PY) -m ruff check engine server tests benchmarks

# the engine tests on CPython 3.11, 3.12 and 3.13, each in a fresh venv (build/matrix) with the
# newest numpy pip gives it; MATRIX="3.12" for one
MATRIX ?= 3.11 3.12 3.13
test-matrix: system-packages-build
	ADDRESS_DATA_DIR=$(DATA_DIR) bash .ci/test-matrix $(MATRIX)

# build the sdist and, from it, the wheel; install the wheel in a fresh venv; use it from
# outside the source tree (.ci/wheel-smoke says what it checks)
wheel-test: system-packages-build
	PYTHON=$(PYTHON) ADDRESS_DATA_DIR=$(DATA_DIR) bash .ci/wheel-smoke

# the API reference, from the docstrings (Sphinx, numpydoc), into build/docs; warnings are errors
docs: install
	$(PY) -m sphinx -W --keep-going -q -b html docs build/docs

test-full: index
	ADDRESS_FULL_INDEX=$(INDEX_DIR) $(PY) -m pytest -m full tests/quality -s

# the benchmarks read INDEX_DIR as it is: never (re)built here (`make index` builds it)
BENCH = ADDRESS_FULL_INDEX=$(INDEX_DIR) $(PY) -P -m pytest benchmarks
bench-index:
	@test -f $(INDEX_DIR)/manifest.json || { echo "no index at $(INDEX_DIR): build one with \
	make index INDEX_DIR=$(INDEX_DIR), or point INDEX_DIR at one"; exit 1; }

bench: install bench-index
	$(BENCH)

# the regression pair: save a baseline, then compare against it (a first compare saves one)
bench-baseline: install bench-index
	$(BENCH) --benchmark-autosave

bench-compare: install bench-index
	$(BENCH) --benchmark-compare --benchmark-compare-fail=median:10%

eval: index
	$(PY) ../shared/eval/evaluate.py ../shared/eval/queries-public.jsonl --engine $(INDEX_DIR)

# the engine tests against an AddressSanitizer build of the extensions (in build/asan)
asan: install
	rm -rf build/asan && mkdir -p build/asan && git ls-files | tar -cT - | tar -x -C build/asan
	# the copy tracks the same files, for the tests that ask git what is tracked
	cd build/asan && git init -q && git add -A
	cd build/asan && CFLAGS="-fsanitize=address -fno-omit-frame-pointer -g -O1" \
		LDFLAGS="-fsanitize=address" $(abspath $(PY)) setup.py -q build_ext --inplace
	# PYTHONPATH: the commands the tests start (python -m engine) import this build too
	cd build/asan && LD_PRELOAD=$$(gcc -print-file-name=libasan.so) ASAN_OPTIONS=detect_leaks=0 \
		PYTHONPATH=$(abspath build/asan) ADDRESS_DATA_DIR=$(abspath $(DATA_DIR)) ADDRESS_EVAL_DIR=$(abspath $(DATA_DIR)/../eval) \
		$(abspath $(PY)) -m pytest tests/engine -q -p no:cacheprovider

# ruff on the Python; cython-lint on every .pyx/.pxd/.pxi; no import cycle in engine/ or server/
# (tests/import_cycles.py); the stubs of the compiled modules against what they export (mypy
# stubtest; Cython's own pickling names allowed)
lint: install
	$(PY) -m ruff check engine server tests benchmarks
	$(PY) .ci/cython-lint
	$(PY) tests/import_cycles.py engine server
	$(PY) -m mypy.stubtest --mypy-config-file .ci/stubtest.ini --allowlist .ci/stubtest-allowlist \
		engine._core engine._csv server._gate server._rules

# the build outputs; the venv stays (`rm -rf .venv` for a fresh one)
clean:
	rm -rf build *.egg-info engine/*.c engine/*.so engine/*.html server/*.c server/*.so server/_gate.html
