"""Skill sets materialized by reference: ``materialize_skills``.

A set is the skills a listing selects (a scope, a category, a layer, names),
each materialized through ``runner.materialize`` (verified against its
manifest and cached by its manifest digest, so shared with single-skill
materializations), gathered into one directory with a folder per skill:
``<cache>/sets/<hex of the set digest>/``. The set digest covers the layout
and the sorted (folder, manifest digest) pairs, so a second thread on the
same library state finds the directory and copies nothing, and a changed
library names a new one (fetching only the skills that changed).

The set's files are hard links into the per-skill cache, or copies where the
filesystem refuses a link. Not symlinks: a host reading the folder and a
bubblewrap bind mount must see real files, and a link to an absolute cache
path dangles once the set is mounted elsewhere; a hard link also outlives a
per-skill folder removed and fetched again. The files are read-only, as in
the per-skill cache (a hard link shares the inode, so its mode).

The contract is the TypeScript client's ``materializeSkills`` too
(docs/agents/skill-folders.md): the same directory for the same set.
"""

from __future__ import annotations

import asyncio
import errno
import hashlib
import os
import shutil
import stat
import tempfile
from collections.abc import Iterable, Mapping, Sequence
from concurrent.futures import FIRST_EXCEPTION, ThreadPoolExecutor, wait
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .errors import FailedPrecondition, InvalidArgument, NotFound, ResourceExhausted
from .runner import ManifestMismatch, Materialized, _publish, _remove, _SyncCalls, _sizes_match, cache_root, materialize
from .v1 import skills_pb2

LAYOUTS = ("flat", "categories")
#: Skills fetched at once when a set is built.
SET_PARALLELISM = 4
#: The most a set may hold (the sum of its skills' manifest bytes) unless max_bytes says otherwise.
DEFAULT_SET_MAX_BYTES = 256 << 20
# What the set digest hashes first: a new contract gets a new tag.
_DIGEST_TAG = b"skillsvc-set/1\n"
# A link's failures that mean "copy instead": another filesystem, a
# filesystem without hard links, a file we may not link (protected_hardlinks).
_NO_LINK = {errno.EXDEV, errno.EPERM, errno.EMLINK, errno.EACCES, errno.ENOTSUP, errno.EOPNOTSUPP}


class FolderCollision(FailedPrecondition):
    """Two selected skills would share a folder of the set (the same folder
    name in the flat layout, or one inside the other): nothing is built."""


@dataclass(frozen=True)
class SetMember:
    """One skill of a set: ``path`` is its folder in the set directory,
    ``folder`` that folder relative to it ("pdf", or "docs/pdf" in the
    categories layout), ``skill_path`` its folder in the library."""

    name: str
    path: Path
    manifest_digest: str
    folder: str
    skill_path: str
    layer: str


@dataclass(frozen=True)
class MaterializedSet:
    """A set of skills in the local cache. ``built`` is False when the
    directory was there already; ``exported`` counts the skills this call
    fetched with ExportSkill (0 when every one was cached). ``skipped`` are
    the selected skills over the manifest limits, whose files cannot be
    verified (materialize one alone to be told why)."""

    path: Path
    digest: str
    layout: str
    skills: tuple[SetMember, ...]
    skipped: tuple[str, ...]
    library_digest: str
    built: bool
    exported: int


def set_digest(layout: str, pairs: Iterable[tuple[str, str]]) -> str:
    """"sha256:<hex>" of a set: the tag, the layout, then each (folder,
    manifest digest) pair by folder in UTF-8 byte order, as
    ``folder NUL digest LF``."""
    h = hashlib.sha256(_DIGEST_TAG + b"layout=" + layout.encode() + b"\n")
    for folder, digest in sorted(pairs, key=lambda p: p[0].encode()):
        h.update(folder.encode() + b"\0" + digest.encode() + b"\n")
    return "sha256:" + h.hexdigest()


def materialize_skills(
    client: Any,
    *,
    scope: str = "",
    category: str | None = None,
    layer: str = "",
    names: Sequence[str] | None = None,
    layout: str = "flat",
    cache_dir: str | os.PathLike[str] | None = None,
    max_bytes: int = DEFAULT_SET_MAX_BYTES,
) -> MaterializedSet:
    """The skills the listing selects, one folder each in a cached set
    directory (see the module doc). scope names a skill set (the calls are
    then made with it as the identity's scope, so every skill listed can be
    fetched); category as list_skills takes it (None: all, "": the skills
    outside any category); layer "user", "team", "team:<id>" or "shared";
    names keeps only the skills named (a name or a library path), each of
    which must be listed. layout "flat" puts each skill at <folder name>/,
    "categories" at <category>/<name>/. Skills over the manifest limits
    are left out (``skipped``); more than max_bytes in all is
    ResourceExhausted before anything is fetched."""
    if layout not in LAYOUTS:
        raise InvalidArgument(f"layout {layout!r}: want flat or categories")
    if not _valid_layer(layer):
        raise InvalidArgument(f"layer {layer!r}: want user, team, team:<id> or shared")
    if isinstance(names, str):
        raise InvalidArgument("names must be a list of skill names or paths, not a string")
    client = _with_scope(client, scope)
    picked, skipped, library_digest = _select(client, scope, category, layer, names, max_bytes)
    folders = _folders(picked, layout)
    want: dict[str, tuple[int, str, int]] = {}
    for folder, s in folders.items():
        for rel, entry in _manifest(s).items():
            want[f"{folder}/{rel}"] = entry
    digest = set_digest(layout, [(folder, s.manifest_digest) for folder, s in folders.items()])
    sets = (Path(cache_dir) if cache_dir is not None else cache_root()) / "sets"
    dest = sets / digest.removeprefix("sha256:")
    members = tuple(
        SetMember(s.name, dest / folder, s.manifest_digest, folder, s.path, s.layer) for folder, s in sorted(folders.items())
    )

    def done(built: bool, exported: int) -> MaterializedSet:
        return MaterializedSet(dest, digest, layout, members, tuple(skipped), library_digest, built, exported)

    if dest.is_dir():
        if _sizes_match(dest, want):
            return done(False, 0)
        _remove(dest, sets)
    mats = _materialize_all(client, folders, cache_dir)
    sets.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(dir=sets, prefix=".build-"))
    try:
        for folder, s in folders.items():
            src = mats[folder].path
            for rel in _manifest(s):
                dst = tmp / folder / rel
                dst.parent.mkdir(parents=True, exist_ok=True)
                _link_or_copy(src / rel, dst)
        # The per-skill folders were checked as they were materialized; one
        # replaced meanwhile (found damaged by another thread) is caught here.
        if not _sizes_match(tmp, want):
            raise ManifestMismatch(f"the skills of set {digest} changed in the cache while it was built; retry")
        _publish(tmp, dest)
    finally:
        _remove(tmp, sets)
    return done(True, sum(m.fetched for m in mats.values()))


async def amaterialize_skills(client: Any, **kwargs: Any) -> MaterializedSet:
    """materialize_skills in a worker thread whose calls run on this loop."""
    return await asyncio.to_thread(materialize_skills, _SyncCalls(client, asyncio.get_running_loop()), **kwargs)


def _with_scope(client: Any, scope: str) -> Any:
    if not scope:
        return client
    if isinstance(client, _SyncCalls):
        return _SyncCalls(client._client.with_identity(scope=scope), client._loop)
    return client.with_identity(scope=scope)


def _valid_layer(layer: str) -> bool:
    return layer in ("", "user", "team", "shared") or (layer.startswith("team:") and len(layer) > len("team:"))


def _layer_matches(want: str, layer: str) -> bool:
    if want == "team":
        return layer.startswith("team:")
    return want in ("", layer)


def _select(
    client: Any, scope: str, category: str | None, layer: str, names: Sequence[str] | None, max_bytes: int
) -> tuple[list[Any], list[str], str]:
    """Every page of the listing (full view: the manifests), filtered; the
    total is checked as the pages come, so a large library is refused
    without being listed whole."""
    wanted = set(names) if names is not None else None
    found: set[str] = set()
    picked: list[Any] = []
    skipped: list[str] = []
    total = 0
    token = ""
    library_digest = ""
    while True:
        page = client.list_skills(category=category, scope=scope, page_token=token, view=skills_pb2.SKILL_VIEW_FULL)
        library_digest = page.library_digest or library_digest
        for s in page.skills:
            if not _layer_matches(layer, s.layer):
                continue
            if wanted is not None:
                hit = wanted & {s.name, s.path}
                if not hit:
                    continue
                found |= hit
            if s.manifest.over_limits or not s.manifest_digest:
                if wanted is not None:
                    raise FailedPrecondition(
                        f"skill {s.name!r} is over the manifest limits ({s.manifest.file_count} files, {s.manifest.total_bytes} bytes; "
                        "at most 512 files and 16 MiB): its files cannot be verified"
                    )
                skipped.append(s.path)
                continue
            total += s.manifest.total_bytes
            if total > max_bytes:
                raise ResourceExhausted(
                    f"the selected skills hold more than max_bytes ({max_bytes} bytes): nothing was fetched; "
                    "narrow the selection (scope, category, layer, names) or raise max_bytes"
                )
            picked.append(s)
        if not (token := page.next_page_token):
            break
    if wanted is not None and (missing := sorted(wanted - found)):
        raise NotFound(f"not listed (absent, disabled, invalid or out of the selection): {missing[:10]}")
    return picked, skipped, library_digest


def _folders(picked: Sequence[Any], layout: str) -> dict[str, Any]:
    """Each skill by its folder in the set; two skills on one folder, or one
    inside another's, is FolderCollision naming both."""
    by: dict[str, Any] = {}
    problems = []
    for s in picked:
        rel = s.path.removeprefix("/skills/")
        parts = rel.split("/")
        if not s.path.startswith("/skills/") or len(parts) > 2 or any(not p or p.startswith(".") or _unsafe(p) for p in parts):
            raise ManifestMismatch(f"skill {s.name!r} has a path no set can hold: {s.path!r}")
        folder = parts[-1] if layout == "flat" else rel
        if folder in by:
            problems.append(
                f"{by[folder].path} and {s.path} would both be {folder}/ (use layout 'categories', or narrow the selection)"
            )
            continue
        by[folder] = s
    for folder, s in by.items():
        parent = folder.rpartition("/")[0]
        if parent in by:
            problems.append(f"{s.path} would be inside {by[parent].path}'s folder {parent}/")
    if problems:
        raise FolderCollision("no set was built: " + "; ".join(sorted(problems)))
    return by


def _unsafe(name: str) -> bool:
    return any(c in name for c in "\\\0\n\r")


def _manifest(s: Any) -> Mapping[str, tuple[int, str, int]]:
    prefix = s.path.rstrip("/") + "/"
    out = {f.path[len(prefix) :]: (f.size, f.sha256, f.mode) for f in s.manifest.files if f.path.startswith(prefix)}
    if len(out) != len(s.manifest.files):
        raise ManifestMismatch(f"the manifest of {s.name!r} lists files outside its folder {s.path}")
    return out


def _materialize_all(client: Any, folders: Mapping[str, Any], cache_dir: Any) -> dict[str, Materialized]:
    """Each skill through the single-skill path, SET_PARALLELISM at a time;
    the first failure cancels what has not started and is raised."""
    out: dict[str, Materialized] = {}
    if not folders:
        return out
    with ThreadPoolExecutor(min(SET_PARALLELISM, len(folders)), thread_name_prefix="skillsvc-set") as pool:
        futures = {pool.submit(materialize, client, s.path, cache_dir=cache_dir): folder for folder, s in folders.items()}
        finished, _ = wait(futures, return_when=FIRST_EXCEPTION)
        for f in finished:
            if f.exception() is not None:
                for other in futures:
                    other.cancel()
                raise f.exception()  # type: ignore[misc]
        for f, folder in futures.items():
            out[folder] = f.result()
    for folder, s in folders.items():
        if out[folder].manifest_digest != s.manifest_digest:
            raise ManifestMismatch(f"skill {s.name!r} changed between the listing and its fetch; retry")
    return out


def _link_or_copy(src: Path, dst: Path) -> None:
    try:
        os.link(src, dst)
    except OSError as err:
        if err.errno not in _NO_LINK:
            raise
        shutil.copyfile(src, dst)
        os.chmod(dst, stat.S_IMODE(os.stat(src).st_mode) & ~0o222)
