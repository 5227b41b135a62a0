"""Pareto sweep: each cell's winner against an independent loop over the splits; CSV, PNG, cache."""

from __future__ import annotations

from pathlib import Path

import pytest

from ocsplan.decode.cache import PlanCache
from ocsplan.decode.pareto import CSV_COLUMNS, _task, cells_csv, pareto_sweep, png_bytes
from ocsplan.decode.ranking import Pruned
from ocsplan.decode.step import decode_step
from ocsplan.executor import Executor
from ocsplan.realization.fabrics import load_fabric
from ocsplan.workload import load_accelerator, load_model, valid_splits
from ocsplan.workload.demand import COMM
from ocsplan.workload.kernels import memory_per_rank

from .conftest import ROOT

FABRICS = ROOT / "simulate" / "fabrics"
RX00 = load_accelerator("rx00")
# the reference loops' plans: a cache of their own (never a sweep's directory or memory), so a split the
# reference loops of several tests share is planned once a worker, whatever their order. What it plans is
# the planner's plan of the instance's text, which the process remembers across caches (decode/cache.py
# _solved: the heuristic is deterministic, so a plan a sweep asked for in this process is that same plan)
REFERENCE_PLANS = PlanCache()


@pytest.fixture(scope="module")
def sweep(tmp_path_factory: pytest.TempPathFactory) -> tuple[list, Path]:  # type: ignore[type-arg]
    cache = tmp_path_factory.mktemp("plans")
    specs = [load_fabric(FABRICS / "nvl576-all-eps.toml"), load_fabric(FABRICS / "nvl576-all-ocs.toml")]
    cells = pareto_sweep(load_model("gpt-oss-120b"), RX00, specs, [32768, 1_000_000], [1, 64], 8, cache=cache)
    return cells, cache


def test_cells_and_points(sweep: tuple[list, Path]) -> None:  # type: ignore[type-arg]
    cells, cache = sweep
    assert len(cells) == 2 * 2 * 2
    splits = len(valid_splits(load_model("gpt-oss-120b"), 8))
    assert all(c.timed + c.infeasible == splits for c in cells)
    plans = [p for p in cache.glob("*.json") if not p.name.endswith(".times.json")]
    # one plan per (batch, split) the OCS fabric timed: those its bound did not rule out
    spec = load_fabric(FABRICS / "nvl576-all-ocs.toml")
    timed = sum(any(not isinstance(o, Pruned) and o is not None for o in row)
                for b in (1, 64) for row in _task(_args(spec, 8, b, 1.0)))
    assert 2 <= len(plans) == timed < 2 * splits
    # and the analytical prices of each: the OCS plan's, and the EPS native ones of every split
    assert len(list(cache.glob("*.times.json"))) == timed + 2 * splits


def test_winner_is_the_best_split(sweep: tuple[list, Path]) -> None:  # type: ignore[type-arg]
    cells, _ = sweep
    model = load_model("gpt-oss-120b")
    for c in cells:
        spec = load_fabric(FABRICS / f"{c.fabric}.toml")
        best = 0.0
        for s in valid_splits(model, 8):
            if memory_per_rank(model, RX00, 8, s, c.batch, c.context).fits:
                best = max(best, decode_step(model, RX00, spec, 8, s, c.batch, c.context).tokens_per_s_user)
        assert c.best is not None and c.best.tokens_per_s_user == best


def test_csv_png_and_parallel_rerun(sweep: tuple[list, Path]) -> None:  # type: ignore[type-arg]
    cells, cache = sweep
    text = cells_csv(cells)
    assert text.splitlines()[0].split(",") == list(CSV_COLUMNS)
    assert len(text.splitlines()) == 1 + len(cells)
    specs = [load_fabric(FABRICS / "nvl576-all-eps.toml"), load_fabric(FABRICS / "nvl576-all-ocs.toml")]
    again = pareto_sweep(load_model("gpt-oss-120b"), RX00, specs, [32768, 1_000_000], [1, 64], 8, cache=cache,
                         executor=Executor(jobs=2))
    assert cells_csv(again) == text  # deterministic, and the same from the cache in worker processes
    assert png_bytes(cells)[:8] == b"\x89PNG\r\n\x1a\n"


def test_batch_that_fits_nowhere() -> None:
    spec = load_fabric(FABRICS / "nvl576-all-eps.toml")
    cells = pareto_sweep(load_model("megatron-5t"), RX00, [spec], [5_000_000], [32], 512)
    assert cells[0].best is None and cells[0].timed == 0 and cells[0].infeasible == 72
    assert cells_csv(cells).splitlines()[1].startswith("megatron-5t,5000000,32,nvl576-all-eps,,")


def test_speculative_decoding_is_priced_in_the_sweep() -> None:
    """pareto --tokens-per-step 2 --accept-rate 0.7: each winner is the best split under decode_step's
    pricing of k = 2, a = 0.7 (an independent loop over the splits), and it changes the answer."""
    model, spec = load_model("gpt-oss-120b"), load_fabric(FABRICS / "nvl576-all-eps.toml")
    cells = pareto_sweep(model, RX00, [spec], [32768], [1], 8, tokens_per_step=2, accept_rate=0.7)
    plain = pareto_sweep(model, RX00, [spec], [32768], [1], 8)
    best = max(decode_step(model, RX00, spec, 8, s, 1, 32768, tokens_per_step=2, accept_rate=0.7).tokens_per_s_user
               for s in valid_splits(model, 8) if memory_per_rank(model, RX00, 8, s, 1, 32768).fits)
    assert cells[0].best is not None and cells[0].best.tokens_per_s_user == best
    assert plain[0].best is not None and plain[0].best.tokens_per_s_user != best


def test_runs_of_splits_on_workers_give_the_same_cells(sweep: tuple[list, Path]) -> None:  # type: ignore[type-arg]
    """Cold on 3 workers (one task per (fabric, batch)): the serial cells; the progress counts every
    point once."""
    cells, _ = sweep
    specs = [load_fabric(FABRICS / "nvl576-all-eps.toml"), load_fabric(FABRICS / "nvl576-all-ocs.toml")]
    seen: list[tuple[int, int]] = []
    again = pareto_sweep(load_model("gpt-oss-120b"), RX00, specs, [32768, 1_000_000], [1, 64], 8,
                         executor=Executor(jobs=3), progress=lambda done, total: seen.append((done, total)))
    assert cells_csv(again) == cells_csv(cells)
    splits = valid_splits(load_model("gpt-oss-120b"), 8)
    assert len(seen) == 2 * 2 and seen[-1] == (2 * 2 * len(splits),) * 2


def _args(spec: object, world: int, batch: int, slack: float) -> tuple:  # type: ignore[type-arg]
    model = load_model("gpt-oss-120b")
    return (model, RX00, spec, world, tuple(valid_splits(model, world)), batch, (32768, 1_000_000), COMM["fp4"],
            PlanCache(), "analytical", (1, 1.0), slack, None)


@pytest.mark.parametrize(("world", "batch", "within"), [(8, 1, 0.0), (64, 1, 0.0), (64, 16, 0.0), (64, 1, 0.07)])
def test_skipped_splits_cannot_win(world: int, batch: int, within: float) -> None:
    """All-OCS: every split the sweep skips, timed here by decode_step, is slower than the
    best split of its context (with ``within``: below the finalists' bar, so Simlette's
    re-timing sees the same finalists); its stated bound is below its step time; and the
    bound does skip some (the test is not vacuous)."""
    model, spec = load_model("gpt-oss-120b"), load_fabric(FABRICS / "nvl576-all-ocs.toml")
    outcomes = _task(_args(spec, world, batch, 1 / (1 - within)))
    splits = valid_splits(model, world)
    skipped = 0
    plans = REFERENCE_PLANS  # the reference's own (not the sweep's): each split planned once for both contexts
    for c, context in enumerate((32768, 1_000_000)):
        steps = {s: decode_step(model, RX00, spec, world, s, batch, context, cache=plans) for s in splits
                 if memory_per_rank(model, RX00, world, s, batch, context).fits}
        best = max(st.tokens_per_s_user for st in steps.values())
        for s, row in zip(splits, outcomes, strict=True):
            found = row[c]
            if s not in steps:
                assert found is None
            elif isinstance(found, Pruned):
                skipped += 1
                assert found.bound_s <= steps[s].step_s * (1 + 1e-12)
                assert steps[s].tokens_per_s_user < (1 - within) * best
            else:
                assert found is not None and found.step_s == steps[s].step_s
    assert skipped > 0


@pytest.mark.parametrize(("world", "batch"), [(8, 1), (64, 16)])
def test_the_bound_is_below_every_priced_step(world: int, batch: int) -> None:
    """All-OCS: the technology's communication bound is below the priced communication of
    every split (planned and priced here, on the plan's circuits) and below the plan's Eq. 1
    objective; and it is not vacuous (above half of the price)."""
    from ocsplan.decode.step import plan_for
    from ocsplan.decode.technology import PRICERS, StepDemand

    model, spec = load_model("gpt-oss-120b"), load_fabric(FABRICS / "nvl576-all-ocs.toml")
    cache = REFERENCE_PLANS
    for s in valid_splits(model, world):
        bound = PRICERS["ocs"].comm_bound(StepDemand(model, world, s, batch, COMM["fp4"]), spec)
        step = decode_step(model, RX00, spec, world, s, batch, 32768, check_memory=False, cache=cache)
        plan = plan_for(model, spec, world, s, batch, COMM["fp4"], cache)
        assert 0.5 * step.comm_s < bound <= min(step.comm_s, plan.objective_s) * (1 + 1e-12), s


def test_spray_reaches_the_re_timing_on_the_switched_fabric_only() -> None:
    """``--spray`` in the sweep: the all-EPS cell is what App. B.6 gives by hand (every fitting split
    timed analytically, those within 7 % of the best re-timed by Simlette with that spray, the best of
    them); the all-OCS cell is the one without spray (no packet switch)."""
    model = load_model("gpt-oss-120b")
    eps, ocs = load_fabric(FABRICS / "nvl576-all-eps.toml"), load_fabric(FABRICS / "nvl576-all-ocs.toml")
    cells = {c.fabric: c for c in pareto_sweep(model, RX00, [eps, ocs], [32768], [16], 64, network="simlette",
                                               spray="packet")}
    plain = {c.fabric: c for c in pareto_sweep(model, RX00, [eps, ocs], [32768], [16], 64, network="simlette")}
    plans = REFERENCE_PLANS  # the reference's own (not the sweeps'): each split planned once for both timings
    steps = [decode_step(model, RX00, eps, 64, s, 16, 32768, cache=plans) for s in valid_splits(model, 64)
             if memory_per_rank(model, RX00, 64, s, 16, 32768).fits]
    bar = 0.93 * max(st.tokens_per_s_user for st in steps)
    best = max((decode_step(model, RX00, eps, 64, st.split, 16, 32768, network="simlette", spray="packet",
                            cache=plans)
                for st in steps if st.tokens_per_s_user >= bar), key=lambda st: st.tokens_per_s_user)
    got = cells["nvl576-all-eps"].best
    assert got is not None and (got.split, got.step_s) == (best.split, best.step_s)
    assert plain["nvl576-all-eps"].best is not None and plain["nvl576-all-eps"].best.step_s != got.step_s
    assert cells["nvl576-all-ocs"].best == plain["nvl576-all-ocs"].best


@pytest.mark.parametrize(("network", "fabrics"), [("analytical", ["nvl576-all-eps"]),
                                                  ("simlette", ["nvl576-all-ocs"])])
def test_spray_that_cannot_apply_is_refused(network: str, fabrics: list[str]) -> None:
    from ocsplan.errors import InstanceError

    specs = [load_fabric(FABRICS / f"{f}.toml") for f in fabrics]
    with pytest.raises(InstanceError, match="spray") as info:
        pareto_sweep(load_model("gpt-oss-120b"), RX00, specs, [32768], [1], 8, network=network, spray="packet")
    assert "\n" not in str(info.value)
