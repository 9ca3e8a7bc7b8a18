"""Where the tests find the repository, the data and the evaluation set, defined once; and the
build of the sample index (tests/conftest.py builds it once per session).

`ADDRESS_DATA_DIR` and `ADDRESS_EVAL_DIR` point elsewhere; by default both sit in `../shared`
beside the repository. tests/conftest.py puts this directory on sys.path, so that every test
module can `from testdata import REPO, DATA_DIR, EVAL_DIR`.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
DATA_DIR = Path(os.environ.get("ADDRESS_DATA_DIR", REPO.parent / "shared" / "data"))
EVAL_DIR = Path(os.environ.get("ADDRESS_EVAL_DIR", REPO.parent / "shared" / "eval"))
SAMPLE = DATA_DIR / "nl-addresses-sample.csv.zst"


def parts(n: int) -> list:
    """`n` parts of a long comparison, for ``@pytest.mark.parametrize("part", parts(n))``: the
    first is in `make check`'s fast loop, the others are ``slow`` (`make test` runs them all),
    and pytest-xdist spreads them over the cores."""
    return [pytest.param(part, marks=() if part == 0 else pytest.mark.slow) for part in range(n)]


def build_sample_index(out_dir: Path) -> Path:
    """Build the sample index with the documented command (`python -m engine build`); return its
    directory."""
    if not SAMPLE.exists():
        pytest.fail(f"the sample data is missing: {SAMPLE} (set ADDRESS_DATA_DIR)")
    subprocess.run([sys.executable, "-m", "engine", "build", str(SAMPLE), str(out_dir), "--no-progress"],
                   cwd=REPO, check=True, capture_output=True)
    return out_dir
