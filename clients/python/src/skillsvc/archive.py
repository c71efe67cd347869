"""extract_skill: unpacks an ExportSkill archive (tar.gz of "<skill>/<file>").

The archive is untrusted input. It is unpacked into a temporary file no
larger than ``max_bytes``, and every header is checked there before tarfile
reads it: tarfile trusts header sizes (a negative one sends it back to the
same header forever), and ends an archive silently at a header it cannot
parse. The check accepts only headers that tarfile reads the way the check
did, so tarfile then walks exactly the entries that were checked.
"""

from __future__ import annotations

import gzip
import os
import re
import tarfile
import tempfile
import zlib
from pathlib import Path
from typing import BinaryIO

from .errors import InvalidArgument, ResourceExhausted

# The server's default --skills.max-export-bytes, which counts the tar as
# this does: headers, content and padding.
MAX_ARCHIVE_BYTES = 256 << 20
# The server's default --skills.max-objects: a skill holds no more files
# than its library lists. tarfile keeps an object per entry in memory.
MAX_ENTRIES = 100_000

_BLOCK = 512
_EMPTY = bytes(_BLOCK)
_CHUNK = 256 << 10
# Go's archive/tar refuses larger pax headers too; an export has one path.
_MAX_PAX = 1 << 20
# tarfile passes mtime to os.utime, which overflows past time_t: keep to
# what a 12-digit octal field holds (until the year 2242).
_MAX_MTIME = 8**11

# Every numeric header field tarfile parses, with its offset and length; one
# it cannot parse ends the archive early.
_NUMBERS = {
    "mode": (100, 8),
    "uid": (108, 8),
    "gid": (116, 8),
    "size": (124, 12),
    "mtime": (136, 12),
    "checksum": (148, 8),
    "devmajor": (329, 8),
    "devminor": (337, 8),
}
_OCTAL = re.compile(rb" *([0-7]*) *")
_PAX_LENGTH = re.compile(rb"([0-9]{1,7}) ")
_PAX_TIME = re.compile(rb"-?[0-9]{1,12}(\.[0-9]{1,9})?")
_TYPES = {
    b"1": "a hard link",
    b"2": "a symlink",
    b"3": "a character device",
    b"4": "a block device",
    b"6": "a FIFO",
    b"g": "a global pax header",
    b"K": "a GNU long link name",
    b"L": "a GNU long name",
    b"S": "a GNU sparse file",
}


def extract_skill(archive: BinaryIO, directory: str | os.PathLike[str], *, max_bytes: int = MAX_ARCHIVE_BYTES) -> Path:
    """Extracts an ExportSkill archive (tar.gz of "<skill>/<file>") into
    directory and returns the skill's folder.

    The archive is untrusted input. It may unpack to at most ``max_bytes``
    and ``MAX_ENTRIES`` entries (else ResourceExhausted); headers that are
    corrupt or impossible (bad checksums, sizes that are negative, not
    numbers or past the end of the archive, malformed pax records), a
    truncated archive, links, devices, GNU and sparse extensions, absolute
    names and names with ".." are refused with InvalidArgument before
    anything is written; and extraction uses tarfile's "data" filter, which
    also keeps every file inside directory.
    """
    dest = Path(directory)
    dest.mkdir(parents=True, exist_ok=True)
    with tempfile.SpooledTemporaryFile(max_size=8 << 20) as raw:
        _gunzip(archive, raw, max_bytes)
        checked = _check_headers(raw)
        raw.seek(0)
        try:
            tar = tarfile.open(fileobj=raw, mode="r:")
        except tarfile.ReadError as err:
            raise InvalidArgument(f"archive is not a tar: {err}") from None
        with tar:
            members = tar.getmembers()
            if [(m.offset_data, m.size) for m in members] != checked:
                raise InvalidArgument("archive headers are read differently by tarfile than they were checked")
            tops = set()
            for m in members:
                parts = Path(m.name).parts
                if m.name.startswith("/") or ".." in parts or not parts:
                    raise InvalidArgument(f"archive entry {m.name!r} leaves the destination")
                tops.add(parts[0])
            if len(tops) != 1:
                raise InvalidArgument(f"archive holds {len(tops)} top-level folders, want one skill folder")
            tar.extractall(dest, members=members, filter="data")
    return dest / tops.pop()


def download_limit(max_bytes: int) -> int:
    """The most compressed bytes an archive of max_bytes can take: gzip
    stores what it cannot shrink with 5 bytes per 64 KiB block, plus a
    header and trailer."""
    return max_bytes + (max_bytes >> 12) + 4096


def _gunzip(archive: BinaryIO, out: BinaryIO, max_bytes: int) -> None:
    total = 0
    with gzip.GzipFile(fileobj=archive, mode="rb") as gz:
        while True:
            try:
                chunk = gz.read(_CHUNK)
            except (OSError, EOFError, zlib.error) as err:  # BadGzipFile is an OSError
                raise InvalidArgument(f"archive is not a complete gzip stream: {err}") from None
            if not chunk:
                return
            total += len(chunk)
            if total > max_bytes:
                raise ResourceExhausted(f"archive unpacks to more than max_bytes ({max_bytes} bytes)")
            out.write(chunk)


def _check_headers(tar: BinaryIO) -> list[tuple[int, int]]:
    """Walks the tar stream's headers, refusing any that is corrupt or that
    tarfile would misread, and returns the data offset and size of each file
    and directory."""
    end = tar.seek(0, os.SEEK_END)
    entries: list[tuple[int, int]] = []
    pax: dict[bytes, bytes] | None = None  # records for the next entry
    pos = 0
    while True:
        if end - pos < _BLOCK:
            raise InvalidArgument("archive is truncated: it ends without an end-of-archive block")
        tar.seek(pos)
        h = tar.read(_BLOCK)
        if h == _EMPTY:
            if pax is not None:
                raise InvalidArgument("archive ends after a pax header, without its entry")
            if not entries:
                raise InvalidArgument("archive holds no entries")
            return entries
        name = _name(h, pax)
        n = {field: _number(h, field, name) for field in _NUMBERS}
        if n["checksum"] not in _checksums(h):
            raise InvalidArgument(f"archive header of {name!r} has a bad checksum")
        if abs(n["mtime"]) > _MAX_MTIME:
            raise InvalidArgument(f"archive entry {name!r} has an mtime out of range")
        kind = h[156:157]
        size = n["size"]
        if kind != b"x" and pax is not None and b"size" in pax:
            size = int(pax[b"size"])
        if size < 0:
            raise InvalidArgument(f"archive entry {name!r} has a negative size")
        data = pos + _BLOCK
        if size > end - data:
            raise InvalidArgument(f"archive entry {name!r} has a size ({size}) past the end of the archive")
        if kind == b"x":
            if pax is not None:
                raise InvalidArgument("archive has a pax header for a pax header")
            if size > _MAX_PAX:
                raise InvalidArgument(f"archive has a pax header of {size} bytes, more than {_MAX_PAX}")
            pax = _pax_records(tar.read(size), name)
        elif kind in (b"0", b"5"):
            if kind == b"5" and size:
                raise InvalidArgument(f"archive entry {name!r} is a directory with a size")
            if len(entries) == MAX_ENTRIES:
                raise ResourceExhausted(f"archive holds more than {MAX_ENTRIES} entries")
            entries.append((data, size))
            pax = None
        else:
            what = _TYPES.get(kind, f"of type {kind!r}")
            raise InvalidArgument(f"archive entry {name!r} is {what}, not a file or directory")
        pos = data + -(-size // _BLOCK) * _BLOCK


def _name(h: bytes, pax: dict[bytes, bytes] | None) -> str:
    """The entry's name as tarfile will see it, for messages."""
    if pax is not None and b"path" in pax:
        return pax[b"path"].decode("utf-8", "replace")
    name, prefix = h[0:100].split(b"\0", 1)[0], h[345:500].split(b"\0", 1)[0]
    return (prefix + b"/" + name if prefix else name).decode("utf-8", "replace")


def _number(h: bytes, field: str, name: str) -> int:
    """Reads a numeric field as tarfile does (octal digits, or base-256
    with the high bit set), accepting only digits between spaces where
    tarfile would take anything int() takes."""
    start, length = _NUMBERS[field]
    raw = h[start : start + length]
    if raw[0] in (0x80, 0xFF):
        n = int.from_bytes(raw[1:], "big")
        return n - 256 ** (length - 1) if raw[0] == 0xFF else n
    m = _OCTAL.fullmatch(raw.split(b"\0", 1)[0])
    if m is None:
        what = "negative" if raw.lstrip(b" ").startswith(b"-") else "not a number"
        raise InvalidArgument(f"archive entry {name!r} has a {field} field that is {what}: {raw!r}")
    return int(m[1] or b"0", 8)


def _checksums(h: bytes) -> tuple[int, int]:
    """The header's checksum summed unsigned and, as some old tars did,
    signed; the checksum field counts as spaces."""
    unsigned = sum(h[:148]) + sum(h[156:]) + 8 * 0x20
    signed = unsigned - 256 * sum(1 for b in h[:148] + h[156:] if b > 127)
    return unsigned, signed


def _pax_records(data: bytes, name: str) -> dict[bytes, bytes]:
    """Parses "<length> <key>=<value>\\n" records that must fill data
    exactly, and refuses the values tarfile would take wrongly."""
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        # tarfile decodes a hdrcharset value it finds anywhere in the
        # header, and fails on one that is not UTF-8.
        raise InvalidArgument(f"archive has a pax header for {name!r} that is not UTF-8") from None
    records: dict[bytes, bytes] = {}
    pos = 0
    while pos < len(data):
        m = _PAX_LENGTH.match(data, pos)
        n = int(m[1]) if m else 0
        key, eq, value = data[m.end() if m else pos : pos + n - 1].partition(b"=")
        if m is None or n < 5 or pos + n > len(data) or data[pos + n - 1] != 0x0A or not key or not eq:
            raise InvalidArgument(f"archive has a malformed pax record at byte {pos} of the header for {name!r}")
        records[key] = value
        pos += n
    if any(k.startswith(b"GNU.sparse.") for k in records):
        raise InvalidArgument(f"archive entry {name!r} is a GNU sparse file, not a file or directory")
    if b"size" in records and not re.fullmatch(rb"[0-9]{1,20}", records[b"size"]):
        raise InvalidArgument(f"archive has a pax size that is not a non-negative number: {records[b'size']!r}")
    if b"path" in records and b"\0" in records[b"path"]:
        raise InvalidArgument(f"archive has a pax path with a NUL byte: {records[b'path']!r}")
    if b"mtime" in records and not (_PAX_TIME.fullmatch(records[b"mtime"]) and abs(float(records[b"mtime"])) <= _MAX_MTIME):
        raise InvalidArgument(f"archive has a pax mtime that is not a time in range: {records[b'mtime']!r}")
    return records
