from __future__ import annotations

from collections.abc import Callable

import pytest

from ocsplan.units import (
    format_bytes,
    format_time,
    parse_bytes,
    parse_flop_rate,
    parse_flops,
    parse_power,
    parse_rate,
    parse_time,
    parse_tokens,
)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("4KiB", 4096),
        ("32 kB", 32000),
        ("66B", 66),
        (66, 66),
        ("640000KiB", 655_360_000),
        ("1MiB", 1 << 20),
        ("1.5KiB", 1536),
        ("2MB", 2_000_000),
    ],
)
def test_parse_bytes(text: object, expected: int) -> None:
    assert parse_bytes(text) == expected


@pytest.mark.parametrize("text", ["4kib", "0B", "-4KiB", "KiB", "4 bananas", "1.5B", True, [], "4b"])
def test_parse_bytes_rejects(text: object) -> None:
    with pytest.raises(ValueError):
        parse_bytes(text)


@pytest.mark.parametrize(
    ("text", "expected"),
    [("0.52us", 0.52e-6), ("520ns", 520e-9), ("1ms", 1e-3), (2, 2.0), ("0.52µs", 0.52e-6)],
)
def test_parse_time(text: object, expected: float) -> None:
    assert parse_time(text) == pytest.approx(expected, rel=1e-12)


@pytest.mark.parametrize(
    ("text", "expected"),
    # 400 Gb/s is R = 5e10 B/s in the paper (App. A.5.1)
    [("400Gb/s", 5e10), ("50GB/s", 5e10), ("400Gbps", 5e10), (1e9, 1e9)],
)
def test_parse_rate(text: object, expected: float) -> None:
    assert parse_rate(text) == pytest.approx(expected, rel=1e-12)


@pytest.mark.parametrize("text", ["400", "400 furlongs/s", "0Gb/s", "-1GB/s"])
def test_parse_rate_rejects(text: str) -> None:
    with pytest.raises(ValueError):
        parse_rate(text)


def test_format() -> None:
    assert format_bytes(4096) == "4KiB"
    assert format_bytes(32000) == "32kB"
    assert format_time(4.54e-6) == "4.54 us"
    assert format_time(602e-9) == "602 ns"


@pytest.mark.parametrize(
    ("parse", "text", "expected"),
    # the paper's "5M" context is 5 x 10^6 tokens; Ki is 2^10
    [(parse_tokens, "5M", 5_000_000), (parse_tokens, "32Ki", 32 * 1024), (parse_tokens, 128, 128),
     (parse_flops, "7GFLOP", 7e9), (parse_flop_rate, "50PFLOP/s", 5e16), (parse_power, "1.7kW", 1700.0),
     (parse_power, 2631, 2631.0)],
)
def test_parse_workload_quantities(parse: Callable[[object], float], text: object, expected: float) -> None:
    assert parse(text) == pytest.approx(expected, rel=1e-12)


@pytest.mark.parametrize(
    ("parse", "text", "message"),
    [(parse_tokens, "5X", "unknown unit 'X' in '5X' (use K, k, M, G, Ki, Mi, Gi)"),
     (parse_tokens, "1.5", "token count must be whole, got '1.5'"),
     (parse_tokens, "2G", "token count '2G' exceeds the limit of 1000000000"),
     (parse_tokens, True, "expected token count such as '5M', got True"),
     (parse_flops, "7 G FLOP", "malformed FLOP count '7 G FLOP' (e.g. '7GFLOP')"),
     (parse_power, "0W", "power must be positive, got '0W'"),
     (parse_bytes, "4 bananas", "unknown size unit 'bananas' in '4 bananas' (use B, kB, MB, KiB, MiB)"),
     (parse_time, [], 'expected a time such as "0.52us", got []'),
     (parse_rate, "fast", "malformed value 'fast'"),
     # an int too large for a float is a one-line error, not an OverflowError
     (parse_power, 10**400, "number of 1329 bits is out of range")],
)
def test_parse_messages(parse: Callable[[object], float], text: object, message: str) -> None:
    with pytest.raises(ValueError) as caught:
        parse(text)
    assert str(caught.value) == message
