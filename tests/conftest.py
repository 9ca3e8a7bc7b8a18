"""Shared fixtures: the real sample of the register, indexed once per test session."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
DATA_DIR = Path(os.environ.get("ADDRESS_DATA_DIR", REPO.parent / "shared" / "data"))
SAMPLE = DATA_DIR / "nl-addresses-sample.csv.zst"


@pytest.fixture(scope="session")
def sample_source() -> Path:
    if not SAMPLE.exists():
        pytest.fail(f"the sample data is missing: {SAMPLE} (set ADDRESS_DATA_DIR)")
    return SAMPLE


@pytest.fixture(scope="session")
def sample_index_dir(tmp_path_factory, sample_source) -> Path:
    from engine.build import build

    out = tmp_path_factory.mktemp("index") / "sample"
    build(sample_source, out, progress=False)
    return out


@pytest.fixture(scope="session")
def sample_index(sample_index_dir):
    import engine

    return engine.AddressIndex.open(sample_index_dir)
