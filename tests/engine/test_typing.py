"""Typed hits for callers (issue 12, part 5): `mypy --strict` accepts a small user program that
reads every field of a `Hit`, a `Match` and a `WordMatch`, and rejects one that misreads them
(so the check cannot pass vacuously)."""

from __future__ import annotations

import os
import subprocess
import sys
import sysconfig
import textwrap
from pathlib import Path

import pytest

import engine

pytestmark = pytest.mark.slow     # runs mypy in a process of its own

PROGRAM = '''
from __future__ import annotations

import engine
from engine.explain import WordMatch, explain, highlights, match_score


def describe(index: engine.AddressIndex, q: str) -> list[str]:
    out: list[str] = []
    for hit in index.suggest(q, limit=5, lat=52.1, lon=5.1):
        street: str = hit.street
        number: int = hit.number
        letter: str = hit.letter
        addition: str = hit.addition
        postcode: str = hit.postcode
        place: tuple[str, str, str] = (hit.locality, hit.municipality, hit.province)
        point: tuple[float, float] = (hit.latitude, hit.longitude)
        score: float = hit.score
        found: str = hit.found
        line: str = hit.lines[0]
        body: bytes = hit.to_json()
        words: tuple[WordMatch, ...] = index.explain(hit)
        kinds = [(w.typed, w.kind, w.field, w.span) for w in explain(index, q, hit)]
        bold: list[list[tuple[int, int]]] = highlights(index, q, hit.address_id)
        matched: float = match_score(words)
        out.append(f"{street} {number}{letter}{addition} {postcode} {place} {point} {score:.2f} "
                   f"{found} {line} {len(body)} {len(words)} {kinds} {bold} {matched} {hit.query} {hit.address_id}")
        out.append(str(hit.to_dict()["lines"]))
    for m in index.match([q, "", None], threads=2):
        quality: str = m.quality
        reason: str = m.reason
        if m.hit is not None:
            out.append(f"{m.hit.street} {quality}")
        out.append(reason)
    ids: list[int] = index.search_ids(q, limit=1)
    scored: list[tuple[int, float]] = index.search_scored(q, limit=1)
    out.append(f"{ids} {scored} {index.hit(ids[0]).postcode}")
    return out
'''

MISREAD = '''
import engine


def wrong(index: engine.AddressIndex) -> int:
    hit = index.suggest("damrak 1")[0]
    return hit.street + hit.number
'''


# NOTE: an installed library's own errors are not the user's: mypy does not report them for
# packages in site-packages. With the engine in a source tree (editable install) this config does
# the same (`follow_imports = silent`: its types are read, its errors not shown), and
# test_our_typed_modules_are_strict_clean checks the modules that hand out the types itself.
CONFIG = """
[mypy]
strict = True
[mypy-engine]
follow_imports = silent
[mypy-engine.*]
follow_imports = silent
"""


def mypy(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    (tmp_path / "mypy.ini").write_text(CONFIG)
    env = dict(os.environ)
    # the engine as this interpreter imports it: from the source tree (editable install) or
    # from site-packages (an installed wheel, which mypy finds itself)
    root = Path(engine.__file__).resolve().parent.parent
    if root != Path(sysconfig.get_paths()["purelib"]).resolve():
        env["MYPYPATH"] = str(root)
    return subprocess.run([sys.executable, "-m", "mypy", "--config-file", "mypy.ini", "--no-incremental",
                           "--python-executable", sys.executable, *args],
                          capture_output=True, text=True, cwd=tmp_path, env=env)


def user_program(tmp_path: Path, program: str) -> subprocess.CompletedProcess[str]:
    (tmp_path / "user.py").write_text(textwrap.dedent(program))
    return mypy(tmp_path, "user.py")


def test_mypy_strict_accepts_a_program_reading_every_field(tmp_path):
    r = user_program(tmp_path, PROGRAM)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "Success: no issues found in 1 source file" in r.stdout


def test_mypy_strict_rejects_a_misread_field(tmp_path):
    r = user_program(tmp_path, MISREAD)
    assert r.returncode == 1, r.stdout + r.stderr
    assert 'Unsupported operand types for + ("str" and "int")' in r.stdout


def test_our_typed_modules_are_strict_clean(tmp_path):
    r = mypy(tmp_path, "-m", "engine.hits", "-m", "engine.match", "-m", "engine.explain")
    assert r.returncode == 0, r.stdout + r.stderr
