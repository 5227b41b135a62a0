"""Simlette on a degraded fabric (``simulate --fail``) against the independent fault recomputation.

Ideal mode is the closed form's world: on every single circuit fault of the two small fabrics of
:mod:`tests.test_deploy_faults` it must give the degraded T that the test's own recomputation
(networkx graph of the surviving circuits, rewritten programs, Eq. 1 written out) gives. The
relay rewrite is checked against that test's transfer-by-transfer rewrite and its ideal cost.
"""

from __future__ import annotations

import json
import math
import tomllib
from collections import Counter
from pathlib import Path

import pytest
from typer.testing import CliRunner

from ocsplan.cayley import Topology
from ocsplan.cli import app
from ocsplan.deploy.degraded import relayed_workload, simulate_faults, surviving
from ocsplan.deploy.faults import fault_ids, relay_cost
from ocsplan.plan import dumps_plan
from ocsplan.realization.circuits import dumps_circuits
from ocsplan.realization.fabrics import FabricSpec, parse_fabric
from ocsplan.schedules import AUTO_EXCLUDED, ideal_cost, schedules_for
from ocsplan.simlette import SimOptions, simulate_plan
from ocsplan.simlette.ideal import IdealNetwork
from ocsplan.simlette.runs import simulate_workload
from ocsplan.simlette.traffic import Workload, program_workload

from .test_deploy_faults import CASES, RELAY_TOPOLOGIES, case, expected, relayed_program

runner = CliRunner()


def fabric(name: str) -> FabricSpec:
    return parse_fabric(tomllib.loads(CASES[name][1]), f"{name}-fabric.toml")


@pytest.mark.parametrize("name", sorted(CASES))
def test_ideal_mode_is_the_degraded_T_on_every_single_circuit_fault(name: str) -> None:
    plan, c = case(name)
    spec = fabric(name)
    seen: Counter[str] = Counter()
    for fault in fault_ids(c, "circuit"):
        report = simulate_faults(plan, spec, SimOptions(mode="ideal"), c, [fault])
        assert report.faults == (fault,)
        ran = {(d.mesh, d.axis, d.demand): d for d in report.demands}
        for m, mesh in enumerate(plan.meshes):
            for i, axis in enumerate(mesh.axes):
                for k, _ in enumerate(axis.demands):
                    want = expected(plan, c, m, i, k, fault)
                    got = ran.get((mesh.name, i, k))
                    if want.how == "stopped":
                        assert got is None
                        assert any(n.startswith(f"{mesh.name}[{i}].{k} ") for n in report.notes)
                        continue
                    assert got is not None and want.T is not None
                    assert (got.how, got.schedule) == (want.how, want.schedule), fault
                    assert got.simulated_s == pytest.approx(want.T, rel=1e-9), (fault, m, i, k)
                    seen[got.how] += 1
    assert {"intact", "fallback"} <= set(seen)  # what single circuit faults of these plans give


def workload_slots(w: Workload) -> list[dict[int, list[tuple[int, int, int]]]]:
    """Per non-empty phase, per node, its sends as sorted (dst, gen, bytes) (empty phases dropped)."""
    out = []
    for k in range(w.phases):
        slot = {x: sorted((s.dst, s.gen, int(s.nbytes)) for s in w.sends[x][k]) for x in w.nodes}
        if any(slot.values()):
            out.append(slot)
    return out


@pytest.mark.parametrize("topology", RELAY_TOPOLOGIES, ids=["K8", "Q4+folds"])
@pytest.mark.parametrize("collective", ["all-reduce", "all-gather", "all-to-all"])
def test_relayed_workload_is_the_rewritten_program(topology: Topology, collective: str) -> None:
    """One coset relayed, the other healthy: the relayed coset's messages are those of the program
    rewritten transfer by transfer (tests.test_deploy_faults.relayed_program), the healthy coset's
    unchanged, and ideal mode (with and without a barrier) costs what relay_cost says."""
    size = 1 << topology.bits
    bits = list(range(1, topology.bits + 1))  # the axis on bits 1..; bit 0 picks the coset
    lam, rate = 0.5e-6, 50e9
    mult = dict.fromkeys(range(1, 2 * size), 1)
    gens = sorted(topology.gens)
    checked = 0
    for s in schedules_for(collective):
        if s.name in AUTO_EXCLUDED or not s.valid(topology):
            continue
        program = s.build(topology, 3 << 20)
        healthy = program_workload(program, bits, 2 * size)
        g = min({t.gen for phase in program.phases for t in phase})
        a = next(a for a in gens if a != g and a ^ g in gens)
        relays = {(min(x, x ^ g), max(x, x ^ g)): min(x, x ^ g) ^ a for x in (0, size - 1)}
        triples = frozenset((x, y, z) for (x, y), z in relays.items())
        got = relayed_workload(healthy, bits, "program", {1: triples})
        rewritten = program_workload(relayed_program(program, relays), bits, 2 * size)
        odd = [x for x in got.nodes if x & 1]
        even = [x for x in got.nodes if not x & 1]
        assert [{x: v for x, v in slot.items() if x & 1} for slot in workload_slots(got)
                if any(slot[x] for x in odd)] == [
            {x: v for x, v in slot.items() if x & 1} for slot in workload_slots(rewritten)]
        assert [{x: v for x, v in slot.items() if not x & 1} for slot in workload_slots(got)
                if any(slot[x] for x in even)] == [
            {x: v for x, v in slot.items() if not x & 1} for slot in workload_slots(healthy)]
        h, v = relay_cost(s.name, topology, 3 << 20, triples)
        cost = ideal_cost(relayed_program(program, relays))
        assert (h, v) == (cost.h, cost.v)
        for barrier in (False, True):
            run = simulate_workload(got, lambda eng, deliver: IdealNetwork(eng, lam, rate, mult, deliver),
                                    mode="ideal", rate=rate, barrier=barrier)
            assert run.simulated_s == pytest.approx(h * lam + float(v) / rate, rel=1e-12), (s.name, barrier)
        checked += 1
    assert checked >= 2


def test_surviving_frees_the_failed_circuits_ports() -> None:
    _, c = case("n64")
    fault = f"circuit:{len(c.circuits) // 2}"
    x = c.circuits[len(c.circuits) // 2]
    left = surviving(c, [fault])
    assert len(left.circuits) == len(c.circuits) - 1
    assert x.a_port not in {e.port for e in left.nodes[x.a]}
    assert x.b_port not in {e.port for e in left.nodes[x.b]}
    assert sum(map(len, left.nodes)) == sum(map(len, c.nodes)) - 2


def test_message_mode_a_lost_parallel_circuit_slows_its_demand() -> None:
    """n64's 16 MiB all-reduce runs on p = 2 circuits per pair: losing one leaves that pair (and
    the bandwidth-bound demand) slower in Simlette, while every demand that did not use it keeps
    its time."""
    plan, c = case("n64")
    spec = fabric("n64")
    healthy = {(d.mesh, d.axis, d.demand): d.simulated_s
               for d in simulate_plan(plan, spec, SimOptions(mode="message"), circuits=c).demands}
    for fault in fault_ids(c, "circuit"):
        report = simulate_faults(plan, spec, SimOptions(mode="message"), c, [fault])
        slower = [d for d in report.demands if d.how == "parallel" and d.payload_bytes >= 1 << 20]
        if slower:
            break
    else:
        pytest.fail("no single circuit fault leaves a parallel circuit")
    for d in report.demands:
        before = healthy[(d.mesh, d.axis, d.demand)]
        if d in slower:
            assert d.simulated_s > before * 1.05
        elif d.how == "intact":
            assert d.simulated_s == before


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("degraded")
    plan, c = case("n16")
    out = {"plan": root / "plan.json", "circuits": root / "circuits.json", "fabric": root / "fabric.toml"}
    out["plan"].write_text(dumps_plan(plan))
    out["circuits"].write_text(dumps_circuits(c))
    out["fabric"].write_text(CASES["n16"][1])
    return out



def test_cli_simulate_fail_writes_the_degraded_run(files: dict[str, Path]) -> None:
    plan, c = case("n16")
    fault = fault_ids(c, "circuit")[0]
    result = runner.invoke(app, ["simulate", str(files["plan"]), "--fabric", str(files["fabric"]), "--circuits",
                                 str(files["circuits"]), "--fail", fault, "--mode", "ideal", "--json", "-"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout[result.stdout.index("{"):])
    assert data["faults"] == [fault]
    for row in data["demands"]:
        want = expected(plan, c, [m.name for m in plan.meshes].index(row["mesh"]), row["axis"], row["demand"],
                        fault)
        assert row["how"] == want.how and math.isclose(row["simulated_s"], want.T or 0.0, rel_tol=1e-9)
    healthy = runner.invoke(app, ["simulate", str(files["plan"]), "--fabric", str(files["fabric"]), "--circuits",
                                  str(files["circuits"]), "--mode", "ideal", "--json", "-"])
    data = json.loads(healthy.stdout[healthy.stdout.index("{"):])
    assert "faults" not in data and all("how" not in row for row in data["demands"])


@pytest.mark.parametrize(("extra", "needle"), [
    (["--fail", "circuit:0"], "--fail: needs --circuits"),
    (["--circuits", "{circuits}", "--fail", "accelerator:3"], "--fail: accelerator:3"),
    (["--circuits", "{circuits}", "--fail", "circuit:99999"], "--fail: circuit:99999"),
    (["--circuits", "{circuits}", "--fail", "device:nope"], "--fail: device:nope"),
    (["--circuits", "{circuits}", "--fail", "switch:1"], "--fail: switch:1"),
])
def test_cli_simulate_fail_bad_input(files: dict[str, Path], extra: list[str], needle: str) -> None:
    args = [a.replace("{circuits}", str(files["circuits"])) for a in extra]
    result = runner.invoke(app, ["simulate", str(files["plan"]), "--fabric", str(files["fabric"]), *args])
    assert result.exit_code == 2, result.output
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and needle in lines[0], result.output
