"""The one atomic writer: whole files or nothing, with the mode a plain open() gives."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from ocsplan.errors import InstanceError, PlanError
from ocsplan.files import CacheDir, check_output, read_json, read_text, write_atomic, write_atomic_with
from ocsplan.limits import MAX_JSON_BYTES


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


# -- outputs and inputs that are not regular files (issue 24, categories 1 and 2) ----------


def _char_device(tmp_path: Path, name: str, major: int, minor: int) -> Path:
    """A character device node of our own (1,3 is /dev/null, 1,7 /dev/full); skipped where mknod is refused."""
    node = tmp_path / name
    try:
        os.mknod(node, 0o666 | stat.S_IFCHR, os.makedev(major, minor))
    except (PermissionError, OSError) as exc:
        pytest.skip(f"mknod not permitted here: {exc}")
    return node


def test_a_device_output_is_written_in_place_not_replaced(tmp_path: Path) -> None:
    node = _char_device(tmp_path, "null", 1, 3)
    write_atomic(node, "plan")
    assert stat.S_ISCHR(node.stat().st_mode)  # still the device
    assert sorted(p.name for p in tmp_path.iterdir()) == ["null"]  # no temporary left beside it


def test_a_full_device_is_one_line(tmp_path: Path) -> None:
    node = _char_device(tmp_path, "full", 1, 7)
    with pytest.raises(InstanceError, match="No space left on device"):
        write_atomic(node, "x" * 10000)
    assert stat.S_ISCHR(node.stat().st_mode)


def test_a_fifo_nobody_reads_is_refused_without_blocking(tmp_path: Path) -> None:
    fifo = tmp_path / "out.json"
    os.mkfifo(fifo)
    with pytest.raises(InstanceError, match="FIFO nobody reads"):
        write_atomic(fifo, "{}")
    assert stat.S_ISFIFO(fifo.stat().st_mode)


def test_a_fifo_with_a_reader_gets_the_bytes(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    reader = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)
    try:
        write_atomic(fifo, "hello")
        assert os.read(reader, 100) == b"hello"
    finally:
        os.close(reader)
    assert stat.S_ISFIFO(fifo.stat().st_mode)


def test_a_socket_output_is_refused(tmp_path: Path) -> None:
    import socket

    path = tmp_path / "s"
    with socket.socket(socket.AF_UNIX) as sock:
        sock.bind(str(path))
        with pytest.raises(InstanceError, match="socket"):
            check_output(path, "--json")
        with pytest.raises(InstanceError, match="socket"):
            write_atomic(path, "x")


def _fail(message: str) -> InstanceError:
    return InstanceError("in", "", message)


def test_a_fifo_input_is_refused_without_blocking(tmp_path: Path) -> None:
    fifo = tmp_path / "in.toml"
    os.mkfifo(fifo)  # nobody ever writes to it: reading it would block forever
    with pytest.raises(InstanceError, match="not a regular file \\(a FIFO\\)"):
        read_text(fifo, _fail)


@pytest.mark.parametrize(("make", "kind"), [("dir", "a directory"), ("null", "a character device")])
def test_other_non_regular_inputs_are_refused(tmp_path: Path, make: str, kind: str) -> None:
    if make == "dir":
        path = tmp_path / "d"
        path.mkdir()
    else:
        path = _char_device(tmp_path, "zero", 1, 5)  # /dev/zero: reading it would never end
    with pytest.raises(InstanceError, match=f"not a regular file \\({kind}\\)"):
        read_text(path, _fail)


def test_a_symlink_loop_is_one_line(tmp_path: Path) -> None:
    (tmp_path / "a").symlink_to(tmp_path / "b")
    (tmp_path / "b").symlink_to(tmp_path / "a")
    with pytest.raises(InstanceError, match="cannot read file"):
        read_text(tmp_path / "a", _fail)


def test_a_byte_order_mark_is_accepted(tmp_path: Path) -> None:
    path = tmp_path / "x.toml"
    path.write_bytes(b"\xef\xbb\xbfname = 'x'\n")
    assert read_text(path, _fail) == "name = 'x'\n"


def test_duplicate_json_keys_are_refused() -> None:
    with pytest.raises(PlanError, match="duplicate key 'a'"):
        read_json('{"a": 1, "b": {"c": 2}, "a": 3}', "p.json")
    with pytest.raises(PlanError, match="duplicate key 'c'"):
        read_json('{"b": [{"c": 2, "c": 2}]}', "p.json")


# the plan cache directory is untrusted input (issue 38, category 5)
@pytest.mark.parametrize("make", ["file", "fifo", "loop", "under-file"])
def test_a_cache_that_cannot_be_a_directory_is_one_line_naming_the_option(tmp_path: Path, make: str) -> None:
    target = tmp_path / "cache"
    if make == "file":
        target.write_text("x")
    elif make == "fifo":
        os.mkfifo(target)
    elif make == "loop":
        (tmp_path / "other").symlink_to(target)
        target.symlink_to(tmp_path / "other")
    else:
        (tmp_path / "f").write_text("x")
        target = tmp_path / "f" / "cache"
    with pytest.raises(InstanceError) as info:
        CacheDir.create(target, "--cache")
    assert str(info.value).startswith("--cache: ") and "\n" not in str(info.value)


def test_a_cache_entry_that_is_a_fifo_is_refused_naming_it_without_blocking(tmp_path: Path) -> None:
    store = CacheDir.create(tmp_path / "cache")
    os.mkfifo(store.path("entry.json"))
    with pytest.raises(InstanceError, match=r"entry\.json: cache entry is a FIFO"):
        store.get("entry.json")
    with pytest.raises(InstanceError, match=r"entry\.json: cache entry is a FIFO"):
        store.put("entry.json", "{}")
    assert stat.S_ISFIFO(os.lstat(store.path("entry.json")).st_mode)  # never renamed over


def test_a_damaged_or_huge_cache_entry_reads_as_missing_and_is_made_again(tmp_path: Path) -> None:
    store = CacheDir.create(tmp_path / "cache")
    store.path("bad.json").write_bytes(b"\xff\xfe not utf-8")
    with store.path("huge.json").open("wb") as handle:  # sparse: no disk used
        handle.truncate(MAX_JSON_BYTES + 1)
    assert store.get("bad.json") is None and store.get("huge.json") is None
    store.put("huge.json", "{}")
    assert store.get("huge.json") == "{}"
