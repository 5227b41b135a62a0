"""The one atomic writer: whole files or nothing, with the mode a plain open() gives."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from ocsplan.files import write_atomic, write_atomic_with


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


@pytest.mark.parametrize("data", ["text é\n", b"\x89PNG bytes"])
def test_write_atomic_writes_the_data_with_the_umask_mode(tmp_path: Path, data: str | bytes) -> None:
    target = tmp_path / "out.bin"
    write_atomic(target, data)
    assert target.read_bytes() == (data.encode() if isinstance(data, str) else data)
    assert target.stat().st_mode & 0o777 == 0o666 & ~_umask()
    assert [p.name for p in tmp_path.iterdir()] == ["out.bin"]


def test_a_failed_writer_leaves_nothing(tmp_path: Path) -> None:
    target = tmp_path / "model.pb.txt"
    seen: list[str] = []

    def broken(tmp: Path) -> None:
        seen.append("".join(tmp.suffixes[-2:]))  # writers that pick the format by suffix see it
        tmp.write_text("half")
        raise RuntimeError("disk full")

    with pytest.raises(RuntimeError):
        write_atomic_with(target, broken)
    assert seen == [".pb.txt"]
    assert list(tmp_path.iterdir()) == []


def test_an_existing_file_is_replaced_whole(tmp_path: Path) -> None:
    target = tmp_path / "plan.json"
    target.write_text("old")
    write_atomic(target, "new")
    assert target.read_text() == "new"
