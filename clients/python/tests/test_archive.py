"""extract_skill on hostile archives, built byte by byte (no server needed)."""

from __future__ import annotations

import gzip
import io
import threading
import zlib
from pathlib import Path
from typing import Any

import pytest

import skillsvc
from skillsvc import extract_skill


def header(name: str, size: int | bytes = 0, kind: bytes = b"0", *, checksum: bytes | None = None, **fields: bytes) -> bytes:
    """A ustar header; size is a number, or the raw 12-byte field. fields
    overrides others by name (mode, mtime, prefix) with raw bytes."""
    h = bytearray(512)
    h[0 : len(name.encode())] = name.encode()
    h[100:108] = fields.get("mode", b"0000644\0")
    h[108:116] = h[116:124] = b"0000000\0"
    h[124:136] = size if isinstance(size, bytes) else b"%011o\0" % size
    h[136:148] = fields.get("mtime", b"14712345670\0")
    h[156:157] = kind
    h[257:265] = b"ustar\x0000"
    prefix = fields.get("prefix", b"")
    h[345 : 345 + len(prefix)] = prefix
    h[148:156] = b" " * 8
    h[148:156] = checksum if checksum is not None else b"%06o\0 " % sum(h)
    assert len(h) == 512
    return bytes(h)


def padded(data: bytes) -> bytes:
    return data + bytes(-len(data) % 512)


def file(name: str, data: bytes = b"x") -> bytes:
    return header(name, len(data)) + padded(data)


def pax(records: dict[str, bytes], size: int | bytes | None = None) -> bytes:
    """A pax extended header ("x") with the records, each "<len> key=value\\n"."""
    body = b""
    for key, value in records.items():
        rec = b" " + key.encode() + b"=" + value + b"\n"
        n = len(rec) + len(str(len(rec)))
        n = len(rec) + len(str(n))  # the length counts its own digits
        body += str(n).encode() + rec
    return header("././@PaxHeader", len(body) if size is None else size, b"x") + padded(body)


def tgz(*parts: bytes, end: bool = True) -> bytes:
    return gzip.compress(b"".join(parts) + (bytes(1024) if end else b""))


def extract(archive: bytes, dest: Path, **kwargs: Any) -> Path:
    """extract_skill on a thread, so a reader that loops fails the test
    rather than hanging the suite."""
    result: dict[str, Any] = {}

    def run() -> None:
        try:
            result["folder"] = extract_skill(io.BytesIO(archive), dest, **kwargs)
        except BaseException as err:  # handed to the test below
            result["error"] = err

    t = threading.Thread(target=run, daemon=True)
    t.start()
    t.join(10)
    assert not t.is_alive(), "extract_skill did not finish within 10 s"
    if "error" in result:
        raise result["error"]
    return result["folder"]


GOOD = file("skill/SKILL.md", b"hello")
HUGE = b"\x80" + b"\xff" * 11  # base-256: 2**88 - 1

HOSTILE = {
    # Sizes tarfile would trust: a negative one walked back to the same
    # header forever.
    "negative size": (tgz(GOOD, header("skill/b", b"-0000001000\0")), "size field that is negative"),
    "negative base-256 size": (tgz(GOOD, header("skill/b", b"\xff" * 10 + b"\xfe\x00")), "negative size"),
    "non-numeric size": (tgz(GOOD, header("skill/b", b"0000000001x\0")), "size field that is not a number"),
    "size int() would take": (tgz(GOOD, header("skill/b", b"0o1\0\0\0\0\0\0\0\0\0")), "size field that is not a number"),
    "base-256 size overflowing": (tgz(GOOD, header("skill/b", HUGE)), "past the end"),
    "size past the end": (tgz(GOOD, header("skill/b", 10_000) + padded(b"x")), "past the end"),
    "non-numeric mode": (tgz(GOOD, header("skill/b", mode=b"rwxr-xr-")), "mode field that is not a number"),
    "mtime past time_t": (tgz(GOOD, header("skill/b", mtime=HUGE)), "mtime out of range"),
    "bad checksum": (tgz(GOOD, header("skill/b", checksum=b"0000001\0")), "bad checksum"),
    "no end-of-archive block": (tgz(GOOD, end=False), "truncated"),
    "cut inside a file": (gzip.compress(header("skill/SKILL.md", 1000) + b"x" * 1000), "truncated"),
    "cut inside a header": (gzip.compress(GOOD + header("skill/b")[:300]), "truncated"),
    "not gzip": (b"PK\x03\x04 a zip", "gzip"),
    "cut gzip": (tgz(GOOD)[:-20], "gzip"),
    "empty archive": (tgz(), "no entries"),
    # pax extended headers: their own size, and the size they set.
    "pax size negative": (tgz(GOOD, pax({"size": b"-1"}), file("skill/b")), "pax size that is not a non-negative number"),
    "pax size not a number": (tgz(GOOD, pax({"size": b"1_0"}), file("skill/b")), "pax size that is not a non-negative number"),
    "pax size huge": (tgz(GOOD, pax({"size": b"99999999999999999999"}), file("skill/b")), "past the end"),
    "pax header size negative": (tgz(GOOD, pax({"path": b"skill/b"}, size=b"\xff" * 12), file("skill/b")), "negative size"),
    "pax header size huge": (tgz(GOOD, pax({"path": b"skill/b"}, size=HUGE), file("skill/b")), "past the end"),
    "pax header too large": (tgz(GOOD, pax({"comment": b"x" * (1 << 20)}), file("skill/b")), "pax header of"),
    "pax record length wrong": (tgz(GOOD, header("p", 13, b"x") + padded(b"99 path=a/b\n\0"), file("skill/b")), "malformed pax record"),
    "pax record length zero": (tgz(GOOD, header("p", 12, b"x") + padded(b"0 path=a/b\n\0"), file("skill/b")), "malformed pax record"),
    "pax record without =": (tgz(GOOD, header("p", 10, b"x") + padded(b"10 pathab\n"), file("skill/b")), "malformed pax record"),
    "pax path with NUL": (tgz(GOOD, pax({"path": b"skill/b\0../x"}), file("skill/b")), "NUL"),
    "pax not UTF-8": (tgz(GOOD, pax({"hdrcharset": b"\xff"}), file("skill/b")), "not UTF-8"),
    "pax mtime past time_t": (tgz(GOOD, pax({"mtime": b"1" * 12}), file("skill/b")), "pax mtime"),
    "pax sparse": (tgz(GOOD, pax({"GNU.sparse.major": b"1"}), file("skill/b")), "sparse"),
    "pax header for a pax header": (tgz(GOOD, pax({"path": b"a"}), pax({"path": b"b"}), file("skill/b")), "pax header for a pax header"),
    "pax header at the end": (tgz(GOOD, pax({"path": b"skill/b"})), "without its entry"),
    "directory with a size": (tgz(GOOD, header("skill/d/", 512, b"5") + padded(b"x")), "directory with a size"),
    # Entries that are not files or directories.
    "symlink": (tgz(GOOD, header("skill/link", kind=b"2")), "is a symlink"),
    "hard link": (tgz(GOOD, header("skill/hard", kind=b"1")), "is a hard link"),
    "character device": (tgz(GOOD, header("skill/dev", kind=b"3")), "is a character device"),
    "FIFO": (tgz(GOOD, header("skill/fifo", kind=b"6")), "is a FIFO"),
    "GNU long name": (tgz(GOOD, header("././@LongLink", 12, b"L") + padded(b"../../evil\0\0"), file("skill/b")), "GNU long name"),
    "global pax header": (tgz(GOOD, header("g", 12, b"g") + padded(b"12 path=../\n"), file("skill/b")), "global pax header"),
    "old-style file": (tgz(GOOD, header("skill/b", 0, b"\0")), "of type"),
    # Names that leave the destination.
    "dot-dot": (tgz(GOOD, file("skill/../../evil")), "leaves the destination"),
    "absolute": (tgz(GOOD, file("/tmp/evil")), "leaves the destination"),
    "dot-dot in the ustar prefix": (tgz(GOOD, header("evil", prefix=b"skill/../..")), "leaves the destination"),
    "dot-dot in a pax path": (tgz(GOOD, pax({"path": b"skill/../../evil"}), file("skill/b")), "leaves the destination"),
    "two folders": (tgz(GOOD, file("other/SKILL.md")), "2 top-level folders"),
}


@pytest.mark.parametrize("archive,message", HOSTILE.values(), ids=HOSTILE.keys())
def test_extract_refuses_hostile_archives(tmp_path: Path, archive: bytes, message: str) -> None:
    dest = tmp_path / "dest"
    with pytest.raises(skillsvc.InvalidArgument, match=message):
        extract(archive, dest)
    assert list(dest.iterdir()) == [], "nothing is written when an entry is refused"
    assert [p.name for p in tmp_path.iterdir()] == ["dest"]


def test_extract_refuses_gzip_bomb_past_max_bytes(tmp_path: Path) -> None:
    # 64 MiB of zeros in 64 KiB of gzip: refused once 1 MiB is unpacked.
    z = zlib.compressobj(wbits=31)
    bomb = z.compress(header("skill/SKILL.md", 64 << 20)) + b"".join(z.compress(bytes(1 << 20)) for _ in range(64)) + z.flush()
    assert len(bomb) < 128 << 10
    with pytest.raises(skillsvc.ResourceExhausted, match="max_bytes"):
        extract(bomb, tmp_path, max_bytes=1 << 20)
    assert list(tmp_path.iterdir()) == []


def test_extract_refuses_too_many_entries(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(skillsvc.archive, "MAX_ENTRIES", 3)
    archive = tgz(*(file(f"skill/{i}") for i in range(4)))
    with pytest.raises(skillsvc.ResourceExhausted, match="more than 3 entries"):
        extract(archive, tmp_path)
    assert list(tmp_path.iterdir()) == []


def test_extract_reads_pax_and_ustar_names(tmp_path: Path) -> None:
    # Go's writer (the server) puts long names in pax records; tarfile's in
    # either; the pax size overrides the header's.
    long = "skill/" + "d" * 120 + "/file.md"
    archive = tgz(
        header("skill/", kind=b"5"),
        file("skill/SKILL.md", b"hello"),
        pax({"path": long.encode(), "size": b"3", "mtime": b"1700000000.5"}),
        header("ignored", 0) + padded(b"abc"),
        header("file.md", 2, prefix=b"skill/refs") + padded(b"ok"),
    )
    folder = extract(archive, tmp_path)
    assert folder == tmp_path / "skill"
    assert (folder / "SKILL.md").read_bytes() == b"hello"
    assert (tmp_path / long).read_bytes() == b"abc"
    assert (folder / "refs/file.md").read_bytes() == b"ok"
    assert (tmp_path / long).stat().st_mtime == 1700000000.5
