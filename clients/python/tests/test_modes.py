"""Exact file modes on materialize, against the real binary on MinIO: the
executable bit recorded by PutLibraryFile(mode=) is what materialize gives
each file (read-only: 0o755 becomes 0o555, 0o644 becomes 0o444), checked
against the manifest on fetch and on every cache reuse."""

from __future__ import annotations

import os
import stat
import uuid
from pathlib import Path

import pytest

from skillsvc import Client, runner

SKILL_MD = b"---\nname: modes-test\ndescription: Files of mixed modes.\n---\nRun them.\n"
# path -> (content, mode given to PutLibraryFile); SKILL.md records none.
FILES = {
    "SKILL.md": (SKILL_MD, 0),
    "scripts/run.sh": (b"#!/bin/sh\necho run\n", 0o755),
    "bin/tool": (b"#!/bin/sh\necho tool\n", 0o755),
    "scripts/lib.py": (b"VALUE = 1\n", 0o644),
    # A shebang does not make a file executable when its mode says otherwise.
    "scripts/not_exec.py": (b"#!/usr/bin/env python3\nprint('{}')\n", 0o644),
}
MODES = {"SKILL.md": 0o644, "scripts/run.sh": 0o755, "bin/tool": 0o755, "scripts/lib.py": 0o644, "scripts/not_exec.py": 0o644}


@pytest.fixture
def user() -> str:
    return "py-modes-" + uuid.uuid4().hex[:6]


@pytest.fixture
def client(skillsvc_env, user: str):
    with Client(skillsvc_env.grpc_addr, user=user, thread="py-" + uuid.uuid4().hex[:12]) as c:
        for path, (data, mode) in FILES.items():
            c.put_library_file(f"tools/modes-test/{path}", data, user=user, mode=mode)
        c.drop_skill_index(user=user)
        yield c


def tree_modes(folder: Path) -> dict[str, int]:
    return {p.relative_to(folder).as_posix(): stat.S_IMODE(p.stat().st_mode) for p in folder.rglob("*") if p.is_file()}


def read_only(modes: dict[str, int]) -> dict[str, int]:
    return {rel: mode & ~0o222 for rel, mode in modes.items()}


def manifest_modes(client: Client) -> dict[str, int]:
    s = client.get_skill("modes-test").skill
    return {f.path.removeprefix(s.path + "/"): f.mode for f in s.manifest.files}


def test_materialize_exact_modes(client: Client, user: str, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    assert manifest_modes(client) == MODES
    first = client.materialize_skill("modes-test", cache_dir=cache)
    assert first.fetched and tree_modes(first.path) == read_only(MODES)
    assert not client.materialize_skill("modes-test", cache_dir=cache).fetched

    # A mode-only change is new content: a new manifest digest, fetched.
    client.put_library_file("tools/modes-test/scripts/lib.py", FILES["scripts/lib.py"][0], user=user, mode=0o755)
    changed = {**MODES, "scripts/lib.py": 0o755}
    assert manifest_modes(client) == changed
    second = client.materialize_skill("modes-test", cache_dir=cache)
    assert second.fetched and second.manifest_digest != first.manifest_digest
    assert tree_modes(second.path) == read_only(changed)

    # A cached copy whose executable bits were changed locally is fetched
    # again, either way round.
    for rel, mode in [("bin/tool", 0o444), ("scripts/not_exec.py", 0o555)]:
        os.chmod(second.path / rel, mode)
        again = client.materialize_skill("modes-test", cache_dir=cache)
        assert again.fetched and again.path == second.path
        assert tree_modes(again.path) == read_only(changed)


class ChmodAfterExport:
    """A client whose export gives bin/tool the wrong mode (as a broken
    extractor or server would)."""

    def __init__(self, client: Client) -> None:
        self.client = client

    def get_skill(self, *args, **kwargs):
        return self.client.get_skill(*args, **kwargs)

    def export_skill(self, *args, **kwargs):
        folder = self.client.export_skill(*args, **kwargs)
        os.chmod(Path(folder) / "bin" / "tool", 0o644)
        return folder


def test_materialize_refuses_wrong_mode(client: Client, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    with pytest.raises(runner.ManifestMismatch, match="bin/tool with mode 0o644"):
        runner.materialize(ChmodAfterExport(client), "modes-test", cache_dir=cache)
    assert list(cache.iterdir()) == []  # nothing kept
