"""Hostile inputs, round 4, category 6: numeric options, one rule.

``--seed`` is 0 .. 2^63 - 1 on every command that takes one (``solve --method stacked``,
``circulant``, ``generate``, ``faults`` with ``--sample``); ``faults --sample`` and ``deploy
--faults`` are 1 .. 20,000; ``--tokens-per-step`` is 1 .. 64 and ``--accept-rate`` is in (0, 1],
below 1 only with ``--tokens-per-step`` above 1 (``decode``, ``pareto``; ``workload`` prints
no rate and refuses it). Each past its bound is one line naming the option, exit 2, nothing
written."""

from __future__ import annotations

__all__ = ["OPTION_CASES"]

F = "{fabric_toml}"
SEED_TOP = str(2**63)
SPLIT = ("--split", "4,128,64,8")
DECODE = ("decode", "megatron-5t", "--fabric", F, *SPLIT)
PARETO = ("pareto", "megatron-5t", "--contexts", "5M", "--batches", "1", "--fabrics", F, "--csv", "{dir}/p4o.csv")
GENERATE = ("generate", "--family", "random", "--out", "{dir}/g4o", "--count", "2")
DEPLOY = ("deploy", "megatron-5t", "--fabric", "all-ocs", "--out", "{dir}/d4o")
FAULTS = ("faults", "{circuits_json}", "--plan", "{plan_json}", "--json", "{dir}/f4o.json")
RANGE = "must be between"
# (id, argv, what the one line names, outputs that must not exist)
OPTION_CASES: tuple[tuple[str, tuple[str, ...], str, tuple[str, ...]], ...] = (
    ("generate-seed-negative", (*GENERATE, "--seed", "-1"), f"--seed: {RANGE} 0 and {2**63 - 1}", ("{dir}/g4o",)),
    ("generate-seed-2^63", (*GENERATE, "--seed", SEED_TOP), f"--seed: {RANGE} 0 and {2**63 - 1}", ("{dir}/g4o",)),
    ("generate-seed-2^200", (*GENERATE, "--seed", str(2**200)), "--seed", ("{dir}/g4o",)),
    ("circulant-seed-2^63", ("circulant", "--size", "64", "--degree", "4", "--seed", SEED_TOP), "--seed", ()),
    ("solve-stacked-seed-negative", ("solve", "{instance_toml}", "--method", "stacked", "--seed", "-1",
                                     "--json", "{dir}/s4o.json"), "--seed", ("{dir}/s4o.json",)),
    ("solve-heuristic-seed", ("solve", "{instance_toml}", "--seed", "3"), "--seed: only --method stacked samples", ()),
    ("faults-sample-20001", (*FAULTS, "--sample", "20001"), f"--sample: {RANGE} 1 and 20000", ("{dir}/f4o.json",)),
    ("faults-sample-negative", (*FAULTS, "--sample", "-5"), "--sample", ("{dir}/f4o.json",)),
    ("faults-seed-without-sample", (*FAULTS, "--seed", "4"), "--seed: has no effect without --sample",
     ("{dir}/f4o.json",)),
    ("deploy-faults-0", (*DEPLOY, "--faults", "0"), f"--faults: {RANGE} 1 and 20000", ("{dir}/d4o",)),
    ("deploy-faults-20001", (*DEPLOY, "--faults", "20001"), f"--faults: {RANGE} 1 and 20000", ("{dir}/d4o",)),
    ("decode-tokens-per-step-0", (*DECODE, "--tokens-per-step", "0"), "--tokens-per-step", ()),
    ("decode-tokens-per-step-65", (*DECODE, "--tokens-per-step", "65"), f"--tokens-per-step: {RANGE} 1 and 64", ()),
    ("decode-accept-rate-above-1", (*DECODE, "--tokens-per-step", "2", "--accept-rate", "1.5"),
     "--accept-rate: must be in (0, 1], got 1.5", ()),
    ("decode-accept-rate-inf", (*DECODE, "--tokens-per-step", "2", "--accept-rate", "inf"), "--accept-rate", ()),
    ("decode-accept-rate-json", (*DECODE, "--accept-rate", "0.9", "--json", "{dir}/d4o.json"),
     "--accept-rate: 0.9 needs --tokens-per-step above 1", ("{dir}/d4o.json",)),
    ("pareto-accept-rate-without-tokens", (*PARETO, "--accept-rate", "0.5"),
     "--accept-rate: 0.5 needs --tokens-per-step above 1", ("{dir}/p4o.csv",)),
    ("pareto-accept-rate-negative", (*PARETO, "--tokens-per-step", "2", "--accept-rate", "-0.1"),
     "--accept-rate: must be in (0, 1]", ("{dir}/p4o.csv",)),
    ("pareto-tokens-per-step-65", (*PARETO, "--tokens-per-step", "65"), "--tokens-per-step", ("{dir}/p4o.csv",)),
    ("workload-tokens-per-step-1e6", ("workload", "megatron-5t", *SPLIT, "--tokens-per-step", "1000000", "--emit",
                                      "{dir}/w4o.toml"), "--tokens-per-step", ("{dir}/w4o.toml",)),
    ("workload-accept-rate-without-tokens", ("workload", "megatron-5t", *SPLIT, "--accept-rate", "0.5"),
     "--accept-rate", ()),
)
