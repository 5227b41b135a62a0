"""Repair of circuit and device faults (issue 40 goal 3): the repaired file validates, only the
circuits the faults take down move, and success and the number of cross-connect changes equal a
brute force over every path of the affected circuits (own rail or a spare port; one device, or
level-2 device, cable, cable), written here from the fabric's documented wiring
(ocsplan.realization.wiring's docstring), sharing nothing with :mod:`ocsplan.deploy.repath`."""

from __future__ import annotations

import itertools
import json
import tomllib
from functools import cache
from pathlib import Path

import pytest
from typer.testing import CliRunner

from ocsplan.cli import app
from ocsplan.deploy.repair import diff_to_dict
from ocsplan.deploy.repath import failed_devices, parse_faults, repath
from ocsplan.errors import InstanceError, RealizationError
from ocsplan.instance import loads_instance
from ocsplan.plan import Plan, dumps_plan
from ocsplan.planning.heuristic import plan_heuristic
from ocsplan.realization.circuits import Circuits, dumps_circuits, loads_circuits
from ocsplan.realization.fabric_check import fabric_faults
from ocsplan.realization.fabrics import FabricSpec, parse_fabric
from ocsplan.realization.realize import realize
from ocsplan.realization.validate import validate

from .realize_cases import SMALL_FABRIC, small_plan
from .test_deploy_faults import N16, single_level

# 64 ranks in 16 racks of 4 (24 racks installed), 8 ports; level 1: 8 down (4 wired), 8 up; level 2
# radix 48. Wiring rule: the fewest spines s dividing 8 with 24 * (8 / s) <= 48: s = 4, fan-out 2.
# Each rack uses at most 4 of a rail's 8 uplinks: free cables for re-paths and hairpins.
ROOMY = """
name = "roomy-two-level"
accelerators = 96
ports = 8
link = "400Gb/s"
[racks]
size = 4
serving = 16
[[level]]
technology = "ocs"
radix = 16
down = 8
up = 8
[[level]]
technology = "ocs"
radix = 48
"""
# (down, spines, fan-out, rack or device domain), by hand from the wiring rule
WIRING = {"roomy": (8, 4, 2, 4),  # ROOMY
          "full": (8, 4, 2, 8), "full-spare": (8, 4, 2, 8),  # SMALL_FABRIC: racks of 8 on 8 down, 8 up
          "single-spare": (32, 0, 0, 32)}  # one level: a device of radix 32 per port index

Pair = tuple[str, int, int]


@cache
def case(name: str) -> tuple[Plan, FabricSpec, Circuits]:
    """roomy: free uplinks, no spare port; full: every uplink of a rail taken, no spare port;
    full-spare: the same with a ninth port the plan leaves spare; single-spare: 16 ranks of an
    8-port plan on a single-level fabric of 9 ports."""
    if name == "single-spare":
        plan = plan_heuristic(loads_instance(N16, "n16.toml"))
        spec = parse_fabric(tomllib.loads(single_level(32, 9)), "f32.toml")
        return plan, spec, realize(plan, spec)
    text = {"roomy": ROOMY, "full": SMALL_FABRIC, "full-spare": SMALL_FABRIC.replace("ports = 8", "ports = 9")}[name]
    spec = parse_fabric(tomllib.loads(text), f"{name}.toml")
    plan = small_plan()
    return plan, spec, realize(plan, spec)


def cross_connects(c: Circuits) -> set[Pair]:
    return {(d.id, a, b) for d in c.devices for a, b in d.cross_connects}


def _pair(device: str, p: int, q: int) -> Pair:
    return device, min(p, q), max(p, q)


def brute_force(c: Circuits, faults: list[str], wiring: tuple[int, int, int, int]) -> int | None:
    """Fewest cross-connect changes of any re-path of the affected circuits through level 2 (None:
    none exists). Every (spine, cable a, cable b) per circuit, a depth-first search with a bound."""
    down, spines, fanout, rack = wiring
    affected: set[int] = set()
    banned_ports: set[tuple[str, int]] = set()
    banned_pairs: set[Pair] = set()
    dead: set[str] = set()
    for fault in faults:
        kind, _, name = fault.partition(":")
        if kind == "device":
            dead.add(name)
            affected |= {i for i, x in enumerate(c.circuits) if any(h.device == name for h in x.path)}
        else:
            i = int(name)
            affected.add(i)
            path = c.circuits[i].path
            if len(path) == 1:
                banned_pairs.add(_pair(path[0].device, path[0].enter, path[0].leave))
            else:
                banned_ports |= {(path[0].device, path[0].leave), (path[1].device, path[1].enter),
                                 (path[1].device, path[1].leave), (path[2].device, path[2].enter)}
    order = sorted(affected)
    busy = {(h.device, p) for i, x in enumerate(c.circuits) if i not in affected for h in x.path
            for p in (h.enter, h.leave)}
    owned = {p for g in c.generators for p in g.ports}
    spare = [p for p in range(c.fabric.ports) if p not in owned]
    level1 = "r" if spines else "d"
    choices: list[list[tuple[int, set[tuple[str, int]]]]] = []
    for i in order:
        x = c.circuits[i]
        acc_a, acc_b = c.placement.accelerator[x.a], c.placement.accelerator[x.b]
        ra, sa, rb, sb = acc_a // rack, acc_a % rack, acc_b // rack, acc_b % rack
        old = {_pair(h.device, h.enter, h.leave) for h in x.path}
        row = []
        for rail in [x.a_port, *spare]:
            l1a, l1b = f"L1.k{rail:02d}.{level1}{ra:02d}", f"L1.k{rail:02d}.{level1}{rb:02d}"
            own = {(l1a, sa), (l1b, sb)}
            paths: list[tuple[set[Pair], set[tuple[str, int]], set[str]]] = []
            if ra == rb:
                paths.append(({_pair(l1a, sa, sb)}, own, {l1a}))
            for s in range(spines):
                l2 = f"L2.k{rail:02d}.d{s:02d}"
                for ja in range(fanout):
                    for jb in range(fanout):
                        up_a, up_b = down + s * fanout + ja, down + s * fanout + jb
                        p2a, p2b = ra * fanout + ja, rb * fanout + jb
                        ports = own | {(l1a, up_a), (l2, p2a), (l2, p2b), (l1b, up_b)}
                        if len(ports) == 6:  # a hairpin on one cable is no path
                            paths.append(({_pair(l1a, sa, up_a), _pair(l2, p2a, p2b), _pair(l1b, up_b, sb)},
                                          ports, {l1a, l1b, l2}))
            for new, ports, crossed in paths:
                if crossed & dead or ports & (busy | banned_ports) or new & banned_pairs:
                    continue
                row.append((len(old ^ new), ports))
        choices.append(sorted(row, key=lambda t: t[0]))
    if any(not row for row in choices):
        return None
    # rows that can share no port are independent: the least sum is the sum of each group's least,
    # whatever order the rows are tried in; each set of ports as a bitmask
    bit: dict[tuple[str, int], int] = {}
    masks = [[(change, sum(1 << bit.setdefault(p, len(bit)) for p in ports)) for change, ports in row]
             for row in choices]
    groups: list[tuple[int, list[list[tuple[int, int]]]]] = []  # (every port any row may take, the rows)
    for masked in masks:
        reach = 0
        for _, taken in masked:
            reach |= taken
        members = [masked]
        for g in [g for g in groups if g[0] & reach]:
            groups.remove(g)
            reach |= g[0]
            members += g[1]
        groups.append((reach, members))
    total = 0
    for _, members in groups:
        least = _least(members)
        if least is None:
            return None
        total += least
    return total


def _least(rows: list[list[tuple[int, int]]]) -> int | None:
    """The least total change of one choice per row, no port taken twice (None: no such choice)."""
    floor = [min(cost for cost, _ in row) for row in rows]
    rest = [sum(floor[k:]) for k in range(len(floor) + 1)]  # the bound: the cheapest choice of each row left
    best: list[int | None] = [None]

    def search(k: int, taken: int, cost: int) -> None:
        if best[0] is not None and cost + rest[k] >= best[0]:
            return
        if k == len(rows):
            best[0] = cost
            return
        for change, ports in rows[k]:  # cheapest first: once one is bounded out, so are the rest
            if best[0] is not None and cost + change + rest[k + 1] >= best[0]:
                break
            if not ports & taken:
                search(k + 1, taken | ports, cost + change)

    search(0, 0, 0)
    return best[0]


def _faults(name: str) -> list[list[str]]:
    """Every single circuit fault, every level-2 device fault, and pairs that compete for cables."""
    _plan, _spec, c = case(name)
    singles = [[f"circuit:{i}"] for i in range(len(c.circuits))]
    devices = [[f"device:{d.id}"] for d in c.devices if d.cross_connects]
    same_rack = [i for i, x in enumerate(c.circuits) if x.a_port == 0 and len(x.path) == 1][:4]
    pairs = [[f"circuit:{a}", f"circuit:{b}"] for a, b in itertools.pairwise(same_rack)]
    return singles + devices + pairs + [[devices[0][0], devices[-1][0]]]


@pytest.mark.parametrize("name", ["roomy", "full", "full-spare", "single-spare"])
def test_every_fault_against_the_brute_force(name: str) -> None:
    plan, spec, c = case(name)
    wiring = WIRING[name]
    repaired = refused = 0
    for faults in _faults(name):
        best = brute_force(c, faults, wiring)
        try:
            r = repath(c, spec, parse_faults(faults, c))
        except RealizationError as exc:
            assert best is None, (faults, best, str(exc))
            assert str(exc).startswith("--failed ")
            refused += len(faults) == 1
            continue
        assert best is not None, faults
        new = loads_circuits(dumps_circuits(r.circuits), "repaired.json")
        assert validate(new, plan) == [] and fabric_faults(new, spec) == [], faults
        moved = {p.circuit for p in r.repaths}
        owned = {p for g in c.generators for p in g.ports}
        for i, (old_x, new_x) in enumerate(zip(c.circuits, new.circuits, strict=True)):
            assert (old_x == new_x) == (i not in moved), (faults, i)
            assert (old_x.a, old_x.b, old_x.generator) == (new_x.a, new_x.b, new_x.generator)
            assert new_x.a_port == new_x.b_port and (new_x.a_port == old_x.a_port or new_x.a_port not in owned)
        assert len(cross_connects(c) ^ cross_connects(new)) == best == r.changes, faults
        dead = {f.partition(":")[2] for f in faults if f.startswith("device:")}
        assert not any(h.device in dead for x in new.circuits for h in x.path)
        assert failed_devices(new) == dead
        repaired += 1
    # roomy repairs every single fault but its level-1 devices'; full only hairpins (each rack's uplinks
    # on a rail all taken, no spare port); with a spare port every single fault is repaired (two faults
    # may both want one accelerator's only spare port)
    assert repaired > 0 and (refused > 0) == (name in ("roomy", "full"))


def test_the_diff_is_the_two_files_difference() -> None:
    _plan, spec, c = case("roomy")
    device = next(d.id for d in c.devices if d.level == 2 and d.cross_connects)
    r = repath(c, spec, (f"device:{device}",))
    new = r.circuits
    d = diff_to_dict(r, c)
    removed = {(e["device"], *p) for e in d["devices"] for p in e["removed"]}
    added = {(e["device"], *p) for e in d["devices"] for p in e["added"]}
    assert removed == cross_connects(c) - cross_connects(new) and added == cross_connects(new) - cross_connects(c)
    assert [p["circuit"] for p in d["repaths"]] == [i for i, x in enumerate(c.circuits)
                                                   if any(h.device == device for h in x.path)]
    assert all(device in p["before"] and device not in p["after"] for p in d["repaths"])


def test_a_repaired_device_stays_out_of_later_repairs() -> None:
    plan, spec, c = case("roomy")
    first = next(d.id for d in c.devices if d.level == 2 and d.cross_connects)
    once = repath(c, spec, (f"device:{first}",)).circuits
    victim = next(i for i, x in enumerate(once.circuits) if len(x.path) == 3)
    twice = repath(once, spec, (f"circuit:{victim}",)).circuits
    assert validate(twice, plan) == [] and failed_devices(twice) == {first}
    assert not any(h.device == first for x in twice.circuits for h in x.path)


@pytest.mark.parametrize(("values", "needle"), [
    (["accelerator:3"], "expected circuit:ID or device:ID"), (["circuit:9999"], "circuit ids are 0..255"),
    (["device:L9.x"], "no OCS device"), (["circuit:1", "circuit:1"], "twice"), ([], "at least one"),
])
def test_bad_fault_values(values: list[str], needle: str) -> None:
    with pytest.raises(InstanceError, match="--failed") as exc:
        parse_faults(values, case("roomy")[2])
    assert needle in str(exc.value)


def test_without_a_spare_port_the_refusal_says_why() -> None:
    _plan, spec, c = case("roomy")
    with pytest.raises(RealizationError, match="no free path for circuit") as exc:
        repath(c, spec, ("device:L1.k00.r00",))
    assert "its rail 0 has no other device it reaches, and the plan uses all 8 ports: no spare port" \
        in str(exc.value)
    _plan, spec, c = case("full")
    victim = next(i for i, x in enumerate(c.circuits) if len(x.path) == 3)
    with pytest.raises(RealizationError, match="every cable pair to a working level-2 device"):
        repath(c, spec, (f"circuit:{victim}",))


def test_a_spare_port_takes_a_circuit_its_rail_cannot() -> None:
    """full-spare: an inter-rack circuit's rail is full, so it moves to port 8 (3 removed, 3 added);
    a circuit inside a rack takes port 8's device in its rack (1 + 1) rather than a hairpin (1 + 3)."""
    plan, spec, c = case("full-spare")
    inter = next(i for i, x in enumerate(c.circuits) if len(x.path) == 3)
    intra = next(i for i, x in enumerate(c.circuits) if len(x.path) == 1)
    for victim, changes, hops in ((inter, 6, 3), (intra, 2, 1)):
        r = repath(c, spec, (f"circuit:{victim}",))
        x = r.circuits.circuits[victim]
        assert (x.a_port, x.b_port, len(x.path), r.changes) == (8, 8, hops, changes)
        assert all(h.device.startswith("L") and ".k08." in h.device for h in x.path)
        assert validate(r.circuits, plan) == []


runner = CliRunner()


def _files(tmp_path: Path) -> tuple[Path, Path, Path]:
    plan, _spec, c = case("roomy")
    (tmp_path / "plan.json").write_text(dumps_plan(plan))
    (tmp_path / "circuits.json").write_text(dumps_circuits(c))
    (tmp_path / "fabric.toml").write_text(ROOMY)
    return tmp_path / "plan.json", tmp_path / "circuits.json", tmp_path / "fabric.toml"


def test_cli_repairs_a_circuit_and_the_file_validates(tmp_path: Path) -> None:
    plan, circuits, fabric = _files(tmp_path)
    c = case("roomy")[2]
    victim = next(i for i, x in enumerate(c.circuits) if len(x.path) == 3)
    out, diff = tmp_path / "repaired.json", tmp_path / "diff.json"
    result = runner.invoke(app, ["repair", str(circuits), "--plan", str(plan), "--fabric", str(fabric),
                                 "--failed", f"circuit:{victim}", "--out", str(out), "--diff", str(diff)])
    assert result.exit_code == 0, result.output
    assert "1 circuit(s) re-pathed, 6 cross-connect change(s)" in result.stdout
    check = runner.invoke(app, ["validate", str(out), "--plan", str(plan), "--fabric", str(fabric)])
    assert check.exit_code == 0 and "valid" in check.stdout, check.output
    assert json.loads(diff.read_text())["repaths"][0]["circuit"] == victim


@pytest.mark.parametrize(("failed", "status", "needle"), [
    (["accelerator:1", "circuit:1"], 2, "--failed: accelerator faults and circuit/device faults are repaired apart"),
    (["device:L1.k00.r00"], 3, "its rail 0 has no other device it reaches"),
    (["circuit:4096"], 2, "--failed: circuit:4096: circuit ids are 0..255"),
])
def test_cli_refusals_are_one_line_and_write_nothing(failed: list[str], status: int, needle: str,
                                                     tmp_path: Path) -> None:
    plan, circuits, fabric = _files(tmp_path)
    args = ["repair", str(circuits), "--plan", str(plan), "--fabric", str(fabric), "--out",
            str(tmp_path / "out.json")]
    for value in failed:
        args += ["--failed", value]
    result = runner.invoke(app, args)
    assert result.exit_code == status, result.output
    assert result.stderr.count("\n") == 1 and needle in result.stderr, result.stderr
    assert not (tmp_path / "out.json").exists()


def _weighted(plan: Plan, sim: dict[str, object]) -> tuple[float, float]:
    """sum w * analytical and sum w * simulated of an ``ocsplan simulate --json`` file, by hand."""
    weights = {(m.name, j, k): d.weight for m in plan.meshes for j, a in enumerate(m.axes)
               for k, d in enumerate(a.demands)}
    rows = sim["demands"]
    assert isinstance(rows, list)
    return (sum(weights[(r["mesh"], r["axis"], r["demand"])] * r["analytical_s"] for r in rows),
            sum(weights[(r["mesh"], r["axis"], r["demand"])] * r["simulated_s"] for r in rows))


@pytest.mark.parametrize("failed", ["accelerator:5", "device:L2.k01.d00"])
def test_repair_prints_the_step_simulate_gives_for_both_files(failed: str, tmp_path: Path) -> None:
    """The healthy and repaired step repair prints are what `simulate --circuits` gives each file;
    an accelerator moved to another rack turns its circuits inside the rack into 3-hop ones, which
    Eq. 1 on the OCS paths never prices cheaper."""
    plan_path, circuits, fabric = _files(tmp_path)
    out = tmp_path / "repaired.json"
    result = runner.invoke(app, ["repair", str(circuits), "--plan", str(plan_path), "--fabric", str(fabric),
                                 "--failed", failed, "--out", str(out)], terminal_width=200)
    assert result.exit_code == 0, result.output
    plan = case("roomy")[0]
    sums = []
    for name, path in (("healthy", circuits), ("repaired", out)):
        sim = tmp_path / f"{name}.sim.json"
        done = runner.invoke(app, ["simulate", str(plan_path), "--fabric", str(fabric), "--circuits", str(path),
                                   "--mode", "message", "--json", str(sim)])
        assert done.exit_code == 0, done.output
        sums.append(_weighted(plan, json.loads(sim.read_text())))
    (eq_h, sim_h), (eq_r, sim_r) = sums
    line = next(row for row in result.stdout.splitlines() if "Eq. 1 on the circuits' OCS paths" in row)
    cells = [c.strip() for c in line.split("│") if c.strip()]
    from ocsplan.units import format_time

    assert cells[1:3] == [format_time(eq_h), format_time(eq_r)]
    line = next(row for row in result.stdout.splitlines() if "Simlette, message mode" in row)
    cells = [c.strip() for c in line.split("│") if c.strip()]
    assert cells[1:3] == [format_time(sim_h), format_time(sim_r)]
    assert eq_r >= eq_h * (1 - 1e-12)
