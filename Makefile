# Everyday commands. `make serve` and `make test` each do all their own set-up.
PYTHON ?= python3
DATA_DIR ?= ../shared/data
ADDRESS_SOURCE ?= $(DATA_DIR)/nl-addresses.csv.zst
INDEX_DIR ?= indexes/nl
HOST ?= 127.0.0.1
PORT ?= 8000

.PHONY: install index serve test test-full test-matrix bench eval asan lint clean

STAMP := build/.installed

install: $(STAMP)

# (re)install when the build inputs change: compiles the Cython extensions in place
$(STAMP): pyproject.toml setup.py engine/*.pyx engine/*.pxd
	$(PYTHON) -m pip install -q --upgrade pip setuptools wheel
	$(PYTHON) -m pip install -q -e ".[test]"
	mkdir -p build && touch $(STAMP)

$(INDEX_DIR)/manifest.json: $(STAMP)
	$(PYTHON) -m engine build $(ADDRESS_SOURCE) $(INDEX_DIR)

index: install $(INDEX_DIR)/manifest.json

serve: index
	ADDRESS_INDEX=$(INDEX_DIR) $(PYTHON) -m gunicorn -c server/gunicorn.conf.py -b $(HOST):$(PORT)

test: install
	ADDRESS_DATA_DIR=$(DATA_DIR) $(PYTHON) -m pytest -m "not full"

# the engine tests on CPython 3.11, 3.12 and 3.13, each in a fresh venv (build/matrix) with the
# newest numpy pip gives it; MATRIX="3.12" for one
MATRIX ?= 3.11 3.12 3.13
test-matrix:
	ADDRESS_DATA_DIR=$(DATA_DIR) bash .ci/test-matrix $(MATRIX)

test-full: index
	ADDRESS_FULL_INDEX=$(INDEX_DIR) $(PYTHON) -m pytest -m full tests/quality -s

bench: index
	ADDRESS_FULL_INDEX=$(INDEX_DIR) $(PYTHON) -m pytest benchmarks --benchmark-group-by=param:limit

eval: index
	$(PYTHON) ../shared/eval/evaluate.py ../shared/eval/queries-public.jsonl --engine $(INDEX_DIR)

# the engine tests against an AddressSanitizer build of the extensions (in build/asan)
asan:
	rm -rf build/asan && mkdir -p build/asan && git ls-files | tar -cT - | tar -x -C build/asan
	cd build/asan && CFLAGS="-fsanitize=address -fno-omit-frame-pointer -g -O1" \
		LDFLAGS="-fsanitize=address" $(PYTHON) setup.py -q build_ext --inplace
	cd build/asan && LD_PRELOAD=$$(gcc -print-file-name=libasan.so) ASAN_OPTIONS=detect_leaks=0 \
		ADDRESS_DATA_DIR=$(abspath $(DATA_DIR)) ADDRESS_EVAL_DIR=$(abspath $(DATA_DIR)/../eval) \
		$(PYTHON) -m pytest tests/engine -q -p no:cacheprovider

lint:
	$(PYTHON) -m ruff check engine server tests benchmarks

clean:
	rm -rf build *.egg-info engine/*.c engine/*.so engine/*.html
