"""The sweep: payload ranges, rows against the closed form, CSV text."""

from __future__ import annotations

import csv
import io

import pytest

from ocsplan.errors import InstanceError
from ocsplan.instance import load_instance
from ocsplan.planning.heuristic import plan_heuristic
from ocsplan.realization.fabrics import load_fabric
from ocsplan.simlette import SimOptions
from ocsplan.simlette.sweep import payload_range, sweep, sweep_csv

from .conftest import ROOT, instance_path


def test_payload_range() -> None:
    assert payload_range(1024, 8192) == [1024, 2048, 4096, 8192]
    assert payload_range(1000, 3000) == [1000, 2000]
    with pytest.raises(InstanceError):
        payload_range(4096, 1024)


def test_sweep_ideal_rows_are_the_closed_form() -> None:
    plan = plan_heuristic(load_instance(instance_path("paper-multimesh-n256")))
    spec = load_fabric(ROOT / "simulate" / "fabrics" / "ocs-single.toml")
    rows = sweep(plan, spec, SimOptions(mode="ideal"), [1024, 65536], "all", only=lambda m, i, k: (m, i) == (1, 0))
    assert {r.schedule for r in rows} >= {"recursive-doubling", "one-shot", "coset-factored-parallel"}
    for r in rows:
        assert r.simulated_s == pytest.approx(r.closed_form_s, rel=1e-9)
    # by hand: the axis is Q4[2,2] (16 ranks, 4 bits); recursive doubling takes one phase per
    # bit, each exchanging the whole payload: T = 4 x 0.52 us + 4 x sigma / 50 GB/s
    for payload, micros in ((1024, 2.16192), (65536, 7.32288)):
        (rd,) = [r for r in rows if r.schedule == "recursive-doubling" and r.payload_bytes == payload]
        assert rd.simulated_s == pytest.approx(micros * 1e-6, rel=1e-12)
    text = sweep_csv(rows)
    parsed = list(csv.DictReader(io.StringIO(text)))
    assert list(parsed[0])[:3] == ["demand", "schedule", "payload_bytes"]
    assert [(p["schedule"], int(p["payload_bytes"]), float(p["simulated_s"])) for p in parsed] == [
        (r.schedule, r.payload_bytes, r.simulated_s) for r in rows
    ]
    assert [float(p["closed_form_s"]) for p in parsed] == [r.closed_form_s for r in rows]
