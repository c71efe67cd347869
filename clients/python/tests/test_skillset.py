"""Skill sets materialized by reference (skillsvc.skillset) against the real
binary on MinIO: a scoped set and a category, their files and modes equal to
the manifests, hard links into the per-skill cache, a second call that
copies nothing, a library change that re-exports only the skill changed,
and a flat folder name two skills share refused. Exports are counted by
wrapping the client's export_skill, the one call that copies."""

from __future__ import annotations

import hashlib
import os
import stat
import uuid
from pathlib import Path

import pytest

from skillsvc import AsyncClient, Client, FolderCollision, NotFound, ResourceExhausted
from skillsvc.skillset import set_digest
from skillsvc.v1 import admin_pb2

SCOPE = "py-set"
# (library path, content, mode): two categories, an executable script, and
# two skills named dup in categories of their own.
FILES = [
    ("sets-a/alpha/SKILL.md", b"---\nname: alpha\ndescription: Alpha for set tests.\n---\nAlpha.\n", 0),
    ("sets-a/alpha/scripts/run.sh", b"#!/bin/sh\necho alpha\n", 0o755),
    ("sets-a/alpha/references/notes.md", b"plain notes\n", 0o644),
    ("sets-a/beta/SKILL.md", b"---\nname: beta\ndescription: Beta for set tests.\n---\nBeta.\n", 0),
    ("sets-b/gamma/SKILL.md", b"---\nname: gamma\ndescription: Gamma for set tests.\n---\nGamma.\n", 0),
    ("sets-b/gamma/tool.py", b"print('gamma')\n", 0o755),
    ("sets-c/dup/SKILL.md", b"---\nname: dup\ndescription: One dup for set tests.\n---\nOne.\n", 0),
    ("sets-d/dup/SKILL.md", b"---\nname: dup\ndescription: Another dup for set tests.\n---\nAnother.\n", 0),
]


@pytest.fixture
def user(skillsvc_env) -> str:
    """A library of its own per test: one test's change is not another's."""
    user = "py-set-" + uuid.uuid4().hex[:8]
    with Client(skillsvc_env.grpc_addr) as admin:
        for path, data, mode in FILES:
            admin.put_library_file(path, data, user=user, mode=mode)
        scope = admin_pb2.SkillScope(name=SCOPE, include=admin_pb2.SkillScopeRule(names=["alpha", "gamma"]))
        admin.set_skill_scope(scope, user=user)
        admin.drop_skill_index(user=user)
    return user


@pytest.fixture
def client(skillsvc_env, user):
    with Client(skillsvc_env.grpc_addr, user=user, thread="t-" + uuid.uuid4().hex[:8]) as c:
        yield c


@pytest.fixture
def exports(monkeypatch) -> list[str]:
    """The skills exported, in order, by any Client or AsyncClient."""
    seen: list[str] = []
    sync_export, async_export = Client.export_skill, AsyncClient.export_skill

    def counted(self, skill, *args, **kwargs):
        seen.append(skill)
        return sync_export(self, skill, *args, **kwargs)

    async def acounted(self, skill, *args, **kwargs):
        seen.append(skill)
        return await async_export(self, skill, *args, **kwargs)

    monkeypatch.setattr(Client, "export_skill", counted)
    monkeypatch.setattr(AsyncClient, "export_skill", acounted)
    return seen


def tree(d: Path) -> dict[str, os.stat_result]:
    return {p.relative_to(d).as_posix(): p.lstat() for p in sorted(d.rglob("*")) if not p.is_dir()}


def assert_matches_manifests(client: Client, cache: Path, s) -> None:
    """Every member's folder holds exactly its manifest's files, each with
    its size, sha256 and executable bit, read-only, and a hard link to the
    per-skill cache's copy."""
    got = {}
    for m in s.skills:
        skill = client.get_skill(m.skill_path).skill
        assert skill.manifest_digest == m.manifest_digest and m.path == s.path / m.folder
        prefix = skill.path + "/"
        for f in skill.manifest.files:
            rel = f.path[len(prefix) :]
            p = m.path / rel
            st = p.lstat()
            assert stat.S_ISREG(st.st_mode) and st.st_size == f.size, rel
            assert hashlib.sha256(p.read_bytes()).hexdigest() == f.sha256, rel
            assert bool(st.st_mode & 0o111) == bool(f.mode & 0o111) and f.mode in (0o644, 0o755), (rel, oct(st.st_mode))
            assert st.st_mode & 0o222 == 0, f"{rel} is writable"
            cached = cache / m.manifest_digest.removeprefix("sha256:") / rel
            assert os.path.samefile(p, cached), f"{rel} is not a hard link to {cached}"
            got[f"{m.folder}/{rel}"] = f.size
    assert {k: v.st_size for k, v in tree(s.path).items()} == got


def test_scoped_set_and_category(client: Client, tmp_path: Path, exports: list[str]) -> None:
    cache = tmp_path / "cache"
    s = client.materialize_skills(scope=SCOPE, cache_dir=cache)
    assert [(m.name, m.folder, m.skill_path) for m in s.skills] == [
        ("alpha", "alpha", "/skills/sets-a/alpha"),
        ("gamma", "gamma", "/skills/sets-b/gamma"),
    ]
    assert (s.layout, s.built, s.exported, s.skipped) == ("flat", True, 2, ())
    assert sorted(exports) == ["/skills/sets-a/alpha", "/skills/sets-b/gamma"]
    assert s.path == cache / "sets" / s.digest.removeprefix("sha256:")
    assert s.digest == set_digest("flat", [(m.folder, m.manifest_digest) for m in s.skills])
    assert_matches_manifests(client, cache, s)
    assert os.access(s.path / "alpha" / "scripts" / "run.sh", os.X_OK)

    # Another thread on the same library state: the same directory, nothing copied.
    other = client.with_identity(thread="t-other")
    again = other.materialize_skills(scope=SCOPE, cache_dir=cache)
    assert (again.path, again.digest, again.built, again.exported) == (s.path, s.digest, False, 0)
    assert len(exports) == 2

    # A category, in the categories layout: alpha comes from the per-skill
    # cache the scoped set filled; only beta is exported.
    c = client.materialize_skills(category="sets-a", layout="categories", cache_dir=cache)
    assert [m.folder for m in c.skills] == ["sets-a/alpha", "sets-a/beta"]
    assert (c.built, c.exported, exports[2:]) == (True, 1, ["/skills/sets-a/beta"])
    assert c.path != s.path
    assert_matches_manifests(client, cache, c)
    assert sorted(os.listdir(c.path)) == ["sets-a"]

    # Explicit names (a name or a library path), and one not listed.
    n = client.materialize_skills(names=["beta", "/skills/sets-b/gamma"], cache_dir=cache)
    assert ([m.folder for m in n.skills], n.exported, len(exports)) == (["beta", "gamma"], 0, 3)
    with pytest.raises(NotFound, match="nope"):
        client.materialize_skills(names=["beta", "nope"], cache_dir=cache)

    # A set damaged on disk is built again, from the per-skill cache.
    (s.path / "gamma" / "tool.py").unlink()
    rebuilt = client.materialize_skills(scope=SCOPE, cache_dir=cache)
    assert (rebuilt.path, rebuilt.built, rebuilt.exported, len(exports)) == (s.path, True, 0, 3)
    assert_matches_manifests(client, cache, rebuilt)


def test_library_change_makes_a_new_set(skillsvc_env, user: str, client: Client, tmp_path: Path, exports: list[str]) -> None:
    cache = tmp_path / "cache"
    before = client.materialize_skills(category="sets-a", cache_dir=cache)
    assert (before.exported, len(exports)) == (2, 2)
    with Client(skillsvc_env.grpc_addr) as admin:
        admin.put_library_file("sets-a/beta/SKILL.md", b"---\nname: beta\ndescription: Beta, changed.\n---\nBeta 2.\n", user=user)
        admin.drop_skill_index(user=user)
    after = client.materialize_skills(category="sets-a", cache_dir=cache)
    assert after.path != before.path and after.library_digest != before.library_digest
    assert (after.built, after.exported, exports[2:]) == (True, 1, ["/skills/sets-a/beta"])
    old = {m.name: m.manifest_digest for m in before.skills}
    new = {m.name: m.manifest_digest for m in after.skills}
    assert old["alpha"] == new["alpha"] and old["beta"] != new["beta"]
    assert (after.path / "beta" / "SKILL.md").read_bytes().endswith(b"Beta 2.\n")
    # The earlier set is still whole for whoever holds it.
    assert (before.path / "beta" / "SKILL.md").read_bytes().endswith(b"Beta.\n")
    assert_matches_manifests(client, cache, after)


def test_flat_collision_refused(client: Client, tmp_path: Path, exports: list[str]) -> None:
    cache = tmp_path / "cache"
    with pytest.raises(FolderCollision) as err:
        client.materialize_skills(layer="user", cache_dir=cache)
    assert "/skills/sets-c/dup and /skills/sets-d/dup would both be dup/" in str(err.value)
    assert exports == [] and not (cache / "sets").exists()
    s = client.materialize_skills(layer="user", layout="categories", cache_dir=cache)
    assert [m.folder for m in s.skills] == ["sets-a/alpha", "sets-a/beta", "sets-b/gamma", "sets-c/dup", "sets-d/dup"]
    # A bound on the total is checked before anything is fetched.
    with pytest.raises(ResourceExhausted, match="max_bytes"):
        client.materialize_skills(layer="user", layout="categories", cache_dir=tmp_path / "small", max_bytes=100)
    assert len(exports) == 5


async def test_async_client(skillsvc_env, user: str, tmp_path: Path, exports: list[str]) -> None:
    cache = tmp_path / "cache"
    async with AsyncClient(skillsvc_env.grpc_addr, user=user, thread="t-async") as c:
        s = await c.materialize_skills(scope=SCOPE, cache_dir=cache)
        assert ([m.name for m in s.skills], s.exported, len(exports)) == (["alpha", "gamma"], 2, 2)
        again = await c.with_identity(thread="t-async-2").materialize_skills(scope=SCOPE, cache_dir=cache)
        assert (again.path, again.built, again.exported, len(exports)) == (s.path, False, 0, 2)
    with Client(skillsvc_env.grpc_addr, user=user, thread="t-check") as sync:
        assert_matches_manifests(sync, cache, s)


def test_set_digest_known_answer() -> None:
    """The digest both clients compute, so they share a set's directory
    (clients/ts/test/skillset.test.ts has the same cases): pairs by folder
    in UTF-8 byte order, each "folder NUL digest LF", after the tag and the
    layout."""
    pairs = [("zeta", "sha256:" + "b" * 64), ("alpha", "sha256:" + "a" * 64), ("é", "sha256:" + "c" * 64), ("docs/pdf", "sha256:" + "d" * 64)]
    want = b"skillsvc-set/1\nlayout=flat\n" + b"".join(
        f.encode() + b"\0sha256:" + c * 64 + b"\n" for f, c in [("alpha", b"a"), ("docs/pdf", b"d"), ("zeta", b"b"), ("é", b"c")]
    )
    assert set_digest("flat", pairs) == "sha256:" + hashlib.sha256(want).hexdigest()
    assert set_digest("flat", pairs) == "sha256:2fba01ac354b2b6b964ab7e0f4825166c015138488422db23323226d078a3d76"
    assert set_digest("categories", []) == "sha256:12ceb90277a10936337ff1a408f9eb614da421bc2df0a01450fa1d52496f4009"


def test_set_runs_under_bubblewrap(client: Client, tmp_path: Path) -> None:
    """The set's folders, bind-mounted read-only where the command sees
    them, hold real files (a symlink into the cache would dangle there),
    executable as the manifest says and not writable."""
    from skillsvc import runner

    if not runner.bwrap_available():
        if os.environ.get("SKILLSVC_REQUIRE_SERVERS") == "1":
            pytest.fail("bubblewrap is not available (apt-get install -y bubblewrap) and SKILLSVC_REQUIRE_SERVERS=1")
        pytest.skip("bubblewrap is not available")
    s = client.materialize_skills(scope=SCOPE, cache_dir=tmp_path / "cache")
    r = runner.run_command(
        client,
        "/skills/alpha/scripts/run.sh && cat /skills/gamma/SKILL.md && { echo x > /skills/alpha/SKILL.md || echo read-only; }",
        skills={f"/skills/{m.folder}": m.path for m in s.skills},
        sandbox="bwrap",
        workspace=False,
    )
    assert (r.exit_code, r.stdout) == (0, "alpha\n---\nname: gamma\ndescription: Gamma for set tests.\n---\nGamma.\nread-only\n"), r.stderr
