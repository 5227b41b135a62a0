"""The decode plan cache is untrusted input (issue 38, category 5): a damaged, foreign,
non-finite, wrong-typed, deeply nested or stale entry is made again, never used; one that
is not a regular file is refused naming it."""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from ocsplan.decode.cache import ENTRY_SCHEMA, PlanCache
from ocsplan.decode.technology import StepDemand
from ocsplan.errors import InstanceError
from ocsplan.files import code_fingerprint
from ocsplan.plan import dumps_plan
from ocsplan.realization.fabrics import load_fabric
from ocsplan.workload import Split, load_model

ROOT = Path(__file__).resolve().parent.parent
SPEC = load_fabric(ROOT / "simulate" / "fabrics" / "nvl576-all-ocs.toml")
MODEL = load_model("gpt-oss-120b")


def _text(split: Split) -> str:
    return StepDemand(MODEL, 8, split, 1, _fp4()).planned_text(SPEC)


def _fp4() -> Any:
    from ocsplan.workload.demand import COMM

    return COMM["fp4"]


TEXT = _text(Split(1, 8, 8, 1))
OTHER = _text(Split(1, 8, 1, 8))


@pytest.fixture
def cache(tmp_path: Path) -> tuple[PlanCache, Path]:
    return PlanCache(tmp_path / "c"), tmp_path / "c"


def _entry(folder: Path, suffix: str) -> Path:
    [path] = [p for p in folder.iterdir() if p.name.endswith(suffix) and (suffix != ".json" or
                                                                          not p.name.endswith(".times.json"))]
    return path


def test_entries_carry_what_they_were_made_from(cache: tuple[PlanCache, Path]) -> None:
    store, folder = cache
    plan = store.plan(TEXT)
    entry = json.loads(_entry(folder, ".json").read_text())
    assert entry["schema"] == ENTRY_SCHEMA and set(entry) == {"schema", "key", "code", "body"}
    assert json.loads(dumps_plan(plan)) == entry["body"]


def _timeless(text: str) -> dict[str, Any]:
    """A plan's JSON without its solve time (the one field that is not a function of the instance)."""
    data: dict[str, Any] = json.loads(text)
    data.pop("solve_seconds")
    return data


def _rewrite(path: Path, edit: Callable[[dict[str, Any]], object]) -> None:
    entry = json.loads(path.read_text())
    edit(entry)
    path.write_text(json.dumps(entry))


def _foreign_plan(entry: dict[str, Any]) -> None:
    entry["body"] = json.loads(dumps_plan(PlanCache().plan(OTHER)))  # a sound plan of another instance


@pytest.mark.parametrize("edit", [
    lambda e: e.update(key="0" * 64),  # made from something else
    lambda e: e.update(code="other-code"),  # made by other code
    lambda e: e["body"].update(objective_s=e["body"]["objective_s"] / 2),  # a number the plan does not derive
    lambda e: e["body"].update(world="eight"),  # wrong-typed
    lambda e: e.update(extra=1),  # a key the entry format does not have
    _foreign_plan,
], ids=["key", "code", "objective", "typed", "extra", "foreign"])
def test_a_bad_plan_entry_is_planned_again(cache: tuple[PlanCache, Path],
                                           edit: Callable[[dict[str, Any]], object]) -> None:
    store, folder = cache
    fresh = dumps_plan(store.plan(TEXT))
    path = _entry(folder, ".json")
    _rewrite(path, edit)
    again = PlanCache(folder)  # a new process: nothing in memory
    assert _timeless(dumps_plan(again.plan(TEXT))) == _timeless(fresh)
    entry = json.loads(path.read_text())  # and the entry made again
    assert _timeless(json.dumps(entry["body"])) == _timeless(fresh)
    assert entry["key"] == hashlib.sha256(TEXT.encode()).hexdigest() and entry["code"] == code_fingerprint()


@pytest.mark.parametrize("text", ['{"schema": ' * 100 + "1" + "}" * 100, "[]", "\udcff", "NaN"])
def test_damaged_plan_entries_are_planned_again(cache: tuple[PlanCache, Path], text: str) -> None:
    store, folder = cache
    fresh = dumps_plan(store.plan(TEXT))
    path = _entry(folder, ".json")
    path.write_text(text, errors="surrogateescape")
    assert _timeless(dumps_plan(PlanCache(folder).plan(TEXT))) == _timeless(fresh)


@pytest.mark.parametrize("value", ["NaN", "-1.0", '"fast"', "1e999", "true"])
def test_a_non_finite_or_wrong_typed_price_is_priced_again(cache: tuple[PlanCache, Path], value: str) -> None:
    store, folder = cache
    fresh = store.prices(TEXT, SPEC, "analytical").times
    path = _entry(folder, ".times.json")
    entry = json.loads(path.read_text())
    first = sorted(entry["body"])[0]
    text = path.read_text().replace(json.dumps(entry["body"][first][1]), value, 1)
    path.write_text(text)
    assert PlanCache(folder).prices(TEXT, SPEC, "analytical").times == fresh


def test_a_fifo_entry_is_refused_naming_it(cache: tuple[PlanCache, Path]) -> None:
    store, folder = cache
    store.plan(TEXT)
    path = _entry(folder, ".json")
    path.unlink()
    os.mkfifo(path)
    with pytest.raises(InstanceError, match="cache entry is a FIFO"):
        PlanCache(folder).plan(TEXT)


@pytest.mark.parametrize(("make", "kind"), [
    (lambda p: p.symlink_to("/dev/null"), "a character device"),
    (lambda p: p.mkdir(), "a directory"),
    (lambda p: (p.symlink_to(p.with_name("loop")), p.with_name("loop").symlink_to(p)), "Too many levels"),
], ids=["device", "directory", "symlink-loop"])
def test_an_entry_that_is_no_regular_file_is_refused_naming_it_and_left_alone(
        cache: tuple[PlanCache, Path], make: Callable[[Path], object], kind: str) -> None:
    store, folder = cache
    store.plan(TEXT)
    path = _entry(folder, ".json")
    path.unlink()
    make(path)
    with pytest.raises(InstanceError, match=kind) as info:
        PlanCache(folder).plan(TEXT)
    assert str(info.value).startswith(str(path)) and "\n" not in str(info.value)
    assert path.is_symlink() or path.is_dir()  # never renamed over


def test_an_entry_over_the_json_bound_is_planned_again_unread(cache: tuple[PlanCache, Path]) -> None:
    from ocsplan.limits import MAX_JSON_BYTES

    store, folder = cache
    fresh = dumps_plan(store.plan(TEXT))
    path = _entry(folder, ".json")
    with path.open("r+b") as handle:  # sparse: the size alone refuses it
        handle.truncate(MAX_JSON_BYTES + 1)
    assert _timeless(dumps_plan(PlanCache(folder).plan(TEXT))) == _timeless(fresh)
    assert path.stat().st_size < MAX_JSON_BYTES  # made again and renamed over


# -- native (EPS, hybrid) prices beside the plans (issue 37) ----------------------------------

EPS = load_fabric(ROOT / "simulate" / "fabrics" / "nvl576-all-eps.toml")
HYBRID = load_fabric(ROOT / "simulate" / "fabrics" / "nvl576-hybrid.toml")


def _native_step(spec: Any, cache: PlanCache | None, network: str = "analytical") -> Any:
    from ocsplan.decode.step import decode_step
    from ocsplan.workload import load_accelerator

    return decode_step(MODEL, load_accelerator("rx00"), spec, 8, Split(1, 8, 8, 1), 1, 1024, network=network,
                       cache=cache)


@pytest.mark.parametrize("spec", [EPS, HYBRID], ids=["eps", "hybrid"])
def test_native_prices_are_kept_and_read_back_without_pricing(cache: tuple[PlanCache, Path], spec: Any,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    store, folder = cache
    fresh = _native_step(spec, None)  # no directory: priced each time
    assert list(folder.iterdir()) == []
    assert _native_step(spec, store) == fresh
    [path] = folder.iterdir()
    entry = json.loads(path.read_text())
    assert path.name.endswith(".times.json") and entry["schema"] == ENTRY_SCHEMA
    assert {tuple(v) for v in entry["body"].values()} == {(c.schedule, c.time_s) for c in fresh.collectives}

    def refuse(*_: object, **__: object) -> None:
        raise AssertionError("priced again although the cache holds the prices")

    monkeypatch.setattr("ocsplan.decode.technology.price_native", refuse)
    assert _native_step(spec, PlanCache(folder)) == fresh  # a new process: read from disk


def test_native_prices_are_keyed_by_the_network_and_fabric(cache: tuple[PlanCache, Path]) -> None:
    store, folder = cache
    contention = _native_step(EPS, store)
    symmetric = _native_step(EPS, store, "analytical-symmetric")
    hybrid = _native_step(HYBRID, store)
    assert len(list(folder.iterdir())) == 3
    assert _native_step(EPS, PlanCache(folder), "analytical-symmetric") == symmetric
    assert _native_step(EPS, PlanCache(folder)) == contention
    assert _native_step(HYBRID, PlanCache(folder)) == hybrid
    _native_step(EPS, store, "simlette")  # simulated prices are not kept
    assert len(list(folder.iterdir())) == 3


@pytest.mark.parametrize("value", ["NaN", "-1.0", '"fast"', "1e999", "true"])
def test_a_bad_native_price_is_priced_again(cache: tuple[PlanCache, Path], value: str) -> None:
    store, folder = cache
    fresh = _native_step(EPS, store)
    [path] = folder.iterdir()
    entry = json.loads(path.read_text())
    first = sorted(entry["body"])[0]
    path.write_text(path.read_text().replace(json.dumps(entry["body"][first][1]), value, 1))
    assert _native_step(EPS, PlanCache(folder)) == fresh
    assert json.loads(path.read_text())["body"] == entry["body"]  # and made again
