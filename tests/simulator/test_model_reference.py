"""The model against its recorded reference (tests/fixtures/model_reference.json, made by
bench/model_reference.py): each cell's figures, re-run on the same seeds, stay within the
replication noise recorded.

A faster model draws its random numbers and orders same-instant events differently, so
its runs are other replications of the same model, not the same numbers. Per figure the
test allows |new mean - old mean| <= K * old sd + REL_FLOOR * |old mean| + one event:

- K = 4: both means are over the 4 seeds, so their difference has sd sqrt(2/4) = 0.71 of
  one run's; 4 recorded sds are about 5.6 of those when the sd was estimated right, and
  still about 2 when it came out at a third of the true one (3 degrees of freedom: that
  happens in about 1 cell-figure in 20), so 182 comparisons do not fail by chance;
- REL_FLOOR = 1 %: a figure whose seeds agree closely (the fast device's TPS: sd 0.3 %)
  may still move by what a latency histogram's bucket error or a reordered instant
  gives, but a change of the model's behaviour (a lost group commit, a missing sync)
  moves figures by far more;
- one event: a rate from a count in a 1 s window moves by whole events (a cell whose
  4 seeds all saw 12 data fsyncs has sd 0).
"""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("model_reference",
                                               ROOT / "bench" / "model_reference.py")
assert _spec is not None and _spec.loader is not None
model_reference = importlib.util.module_from_spec(_spec)
sys.modules["model_reference"] = model_reference   # dataclasses look their module up
_spec.loader.exec_module(model_reference)

K = model_reference.K
REL_FLOOR = model_reference.REL_FLOOR
FIXTURE = ROOT / "tests" / "fixtures" / "model_reference.json"


def _reference() -> dict:
    return json.loads(FIXTURE.read_text())


def test_fixture_covers_the_cells():
    ref = _reference()
    assert ref["provenance"]["made_at_commit"]
    assert set(ref["cells"]) == {c.name for c in model_reference.CELLS}
    for figs in ref["cells"].values():
        assert set(figs) == set(model_reference.FIGURES)
        assert all(len(f["values"]) == len(model_reference.SEEDS) for f in figs.values())


def test_within_rejects_a_shift():
    old = {"mean": 100.0, "sd": 1.0}
    assert model_reference.within(old, {"mean": 104.5}, K, REL_FLOOR, 0.0)[0]
    assert not model_reference.within(old, {"mean": 106.0}, K, REL_FLOOR, 0.0)[0]
    assert not model_reference.within(old, {"mean": None}, K, REL_FLOOR, 0.0)[0]


@pytest.mark.slow
@pytest.mark.parametrize("cell", model_reference.CELLS, ids=lambda c: c.name)
def test_model_within_replication_noise(cell):
    ref = _reference()["cells"][cell.name]
    new = model_reference.run_cell(cell)
    bad = []
    for figure in model_reference.FIGURES:
        ok, margin = model_reference.within(ref[figure], new[figure], K, REL_FLOOR,
                                            model_reference.floor(figure))
        if not ok:
            bad.append(f"{figure}: {ref[figure]['mean']} (sd {ref[figure]['sd']}) -> "
                       f"{new[figure]['mean']} ({margin:.2f} of the allowed difference)")
    assert not bad, "; ".join(bad)
