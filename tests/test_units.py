from __future__ import annotations

import pytest

from ocsplan.units import format_bytes, format_time, parse_bytes, parse_rate, parse_time


@pytest.mark.parametrize(
    ("text", "expected"),
    [("4KiB", 4096), ("32 kB", 32000), ("66B", 66), (66, 66), ("640000KiB", 655_360_000),
     ("1MiB", 1 << 20), ("1.5KiB", 1536), ("2MB", 2_000_000)],
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
