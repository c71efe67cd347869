"""Every Client and AsyncClient method against the real binary on MinIO
(skillsvc.testing starts it with the example library for alice)."""

from __future__ import annotations

import os
import uuid
from pathlib import Path

import grpc
import pytest

import skillsvc
from skillsvc import AsyncClient, Client
from skillsvc.v1 import skills_pb2

EXAMPLES = Path(__file__).resolve().parents[3] / "examples" / "skills"


def thread() -> str:
    return "py-" + uuid.uuid4().hex[:12]


@pytest.fixture
def client(skillsvc_env):
    with Client(skillsvc_env.grpc_addr, user=skillsvc_env.user, thread=thread()) as c:
        yield c


@pytest.fixture
async def aclient(skillsvc_env):
    async with AsyncClient(skillsvc_env.grpc_addr, user=skillsvc_env.user, thread=thread()) as c:
        yield c


def test_files(client: Client, tmp_path: Path) -> None:
    info = client.write("/workspace/notes.md", "alpha\nbeta\ngamma\n").info
    assert info.path == "/workspace/notes.md" and info.size == 17 and info.etag

    with pytest.raises(skillsvc.AlreadyExists):
        client.write("/workspace/notes.md", "x", must_not_exist=True)
    with pytest.raises(skillsvc.FailedPrecondition):
        client.write("/workspace/notes.md", "x", if_match='"stale"')
    assert client.write("/workspace/notes.md", "alpha\nbeta\ngamma\n", if_match=info.etag).info.etag

    assert client.stat("/workspace/notes.md").info.size == 17
    r = client.read("/workspace/notes.md", offset=1, limit=1, line_numbers=True)
    assert (r.content.lstrip(), r.total_lines, r.next_offset) == ("2\tbeta", 3, 2)

    assert client.edit("/workspace/notes.md", "beta", "BETA").occurrences == 1
    with pytest.raises(skillsvc.FailedPrecondition):
        client.edit("/workspace/notes.md", "absent", "x")
    assert client.read("/workspace/notes.md").content == "alpha\nBETA\ngamma"

    assert [m.path for m in client.glob("**/*.md", path="/workspace").matches] == ["/workspace/notes.md"]
    g = client.grep("beta", path="/workspace", case_insensitive=True)
    assert [(m.path, m.line, m.text) for m in g.matches] == [("/workspace/notes.md", 2, "BETA")]

    for i in range(3):
        client.write(f"/workspace/dir/f{i}.txt", str(i))
    page = client.list("/workspace/dir", page_size=2)
    assert len(page.entries) == 2 and page.next_page_token
    assert [e.name for e in client.iter_list("/workspace/dir", page_size=2)] == ["f0.txt", "f1.txt", "f2.txt"]

    blob = bytes(range(256)) * 2000  # several chunks, not UTF-8
    assert client.upload("/workspace/blob.bin", blob, chunk_size=100_000).size == len(blob)
    assert client.download("/workspace/blob.bin") == blob
    assert client.download("/workspace/blob.bin", offset=10, limit=5) == blob[10:15]
    local = tmp_path / "in.bin"
    local.write_bytes(blob[:1000])
    client.upload_file("/workspace/from-file.bin", local)
    out = client.download_file("/workspace/from-file.bin", tmp_path / "out.bin")
    assert out.read_bytes() == blob[:1000]

    assert client.delete("/workspace/dir", recursive=True).deleted == 3
    with pytest.raises(skillsvc.NotFound) as exc:
        client.stat("/workspace/dir/f0.txt")
    assert exc.value.code == grpc.StatusCode.NOT_FOUND and "not found" in exc.value.message


def test_errors_keep_the_code(client: Client) -> None:
    cases = [
        (lambda: client.read("/workspace/missing.md"), skillsvc.NotFound),
        (lambda: client.read("/workspace/../../bob/x"), skillsvc.InvalidArgument),
        (lambda: client.write("/skills/x.md", "x"), skillsvc.PermissionDenied),
        (lambda: client.grep("(", regex=True), skillsvc.InvalidArgument),
        (lambda: client.download("/workspace/missing.bin"), skillsvc.NotFound),
        (lambda: client.list_skills(page_token="garbage"), skillsvc.InvalidArgument),
        (lambda: client.with_identity(user=None).list("/workspace"), skillsvc.Unauthenticated),
    ]
    for call, exc in cases:
        with pytest.raises(exc) as info:
            call()
        assert isinstance(info.value, skillsvc.SkillsvcError) and info.value.code == exc.code


def test_identity(client: Client) -> None:
    client.write("/workspace/mine.md", "mine")
    other_thread = client.with_identity(thread=thread())
    with pytest.raises(skillsvc.NotFound):
        other_thread.read("/workspace/mine.md")
    bob = client.with_identity(user="bob")
    assert list(bob.iter_skills()) == []
    ticketed = client.with_identity(ticket="T-" + uuid.uuid4().hex[:6])
    ticketed.write("/ticket/spec.md", "spec")
    assert ticketed.read("/ticket/spec.md").content == "spec"
    with pytest.raises(skillsvc.SkillsvcError):
        client.read("/ticket/spec.md")  # no ticket, no /ticket mount


def test_skills(client: Client, tmp_path: Path) -> None:
    cats = {c.name: c.skill_count for c in client.list_categories().categories}
    assert cats == {"data": 1, "writing": 2}
    assert sorted(s.name for s in client.iter_skills(page_size=1)) == ["commit-message", "csv-summary", "release-notes"]
    assert [s.name for s in client.list_skills(category="data").skills] == ["csv-summary"]

    block = client.format_skills(char_budget=4000)
    assert block.included == 3 and "release-notes" in block.text

    got = client.get_skill("release-notes")
    assert got.skill.path == "/skills/writing/release-notes"
    assert got.frontmatter["metadata"]["owner"] == "docs-team"
    assert [f.path for f in got.files] == ["references/style.md"]

    text = client.render_skill("commit-message", arguments="fix the login redirect").text
    assert "ARGUMENTS: fix the login redirect" in text
    style = client.read_skill_file("release-notes", "references/style.md").content
    assert style == (EXAMPLES / "writing/release-notes/references/style.md").read_text()
    assert client.search_skills("changelog", limit=1).results[0].skill.name == "release-notes"

    folder = client.export_skill("csv-summary", tmp_path)
    assert (folder / "scripts/summarize.py").read_bytes() == (EXAMPLES / "data/csv-summary/scripts/summarize.py").read_bytes()
    assert (folder / "SKILL.md").read_bytes() == (EXAMPLES / "data/csv-summary/SKILL.md").read_bytes()

    assert client.set_skill_enabled("csv-summary", False).skill.disabled
    try:
        assert "csv-summary" not in [s.name for s in client.iter_skills()]
        assert "csv-summary" in [s.name for s in client.iter_skills(include_disabled=True)]
    finally:
        client.set_skill_enabled("csv-summary", True)


def test_admin(skillsvc_env) -> None:
    # In insecure mode AdminService needs no identity.
    user = "py-admin-" + uuid.uuid4().hex[:6]
    with Client(skillsvc_env.grpc_addr) as admin, Client(skillsvc_env.grpc_addr, user=user, thread="t") as c:
        skill_md = b"---\nname: haiku\ndescription: Write a haiku.\n---\n5-7-5\n"
        assert admin.put_library_file("poems/haiku/SKILL.md", skill_md, user=user).size == len(skill_md)
        admin.put_library_file("poems/haiku/count", b"echo 5 7 5\n", user=user, mode=0o755)
        admin.put_library_file("poems/haiku/notes.sh", b"#!/bin/sh\n", user=user, mode=0o644)
        admin.drop_skill_index(user=user)
        assert [s.name for s in c.iter_skills()] == ["haiku"]
        modes = {f.path.rsplit("/", 1)[1]: f.mode for f in c.get_skill("haiku").skill.manifest.files}
        assert modes == {"SKILL.md": 0o644, "count": 0o755, "notes.sh": 0o644}
        assert admin.set_user_skill_enabled(user, "haiku", False).skill.disabled
        assert [s.name for s in c.iter_skills()] == []
        for name in ["SKILL.md", "count", "notes.sh"]:
            admin.delete_library_file("poems/haiku/" + name, user=user)
        admin.drop_skill_index(user=user)
        assert list(c.iter_skills(include_disabled=True)) == []


def test_export_skill_max_bytes(skillsvc_env, tmp_path: Path) -> None:
    # 64 KiB of noise does not compress: its gzip is too large to download
    # for a small max_bytes, and its tar (68096 bytes) too large to unpack
    # for one just below that.
    user = "py-export-" + uuid.uuid4().hex[:6]
    with Client(skillsvc_env.grpc_addr) as admin, Client(skillsvc_env.grpc_addr, user=user, thread="t") as c:
        admin.put_library_file("tools/noisy/SKILL.md", b"---\nname: noisy\ndescription: Noise.\n---\nbody\n", user=user)
        admin.put_library_file("tools/noisy/noise.bin", os.urandom(64 << 10), user=user)
        admin.drop_skill_index(user=user)
        with pytest.raises(skillsvc.ResourceExhausted, match="larger than a gzip of max_bytes"):
            c.export_skill("noisy", tmp_path / "a", max_bytes=16 << 10)
        with pytest.raises(skillsvc.ResourceExhausted, match="unpacks to more than max_bytes"):
            c.export_skill("noisy", tmp_path / "b", max_bytes=68095)
        assert (c.export_skill("noisy", tmp_path / "c", max_bytes=68096) / "noise.bin").stat().st_size == 64 << 10


async def test_async_client(aclient: AsyncClient, tmp_path: Path) -> None:
    c = aclient
    info = (await c.write("/workspace/a.md", "one\ntwo\n")).info
    assert (await c.stat("/workspace/a.md")).info.etag == info.etag
    assert (await c.edit("/workspace/a.md", "two", "2", replace_all=True)).occurrences == 1
    assert (await c.read("/workspace/a.md")).content == "one\n2"
    assert [m.path for m in (await c.glob("*.md", path="/workspace")).matches] == ["/workspace/a.md"]
    assert (await c.grep("2", path="/workspace")).matches[0].line == 2
    await c.upload("/workspace/b.bin", b"\x00\x01" * 300_000, chunk_size=65536)
    assert await c.download("/workspace/b.bin") == b"\x00\x01" * 300_000
    src = tmp_path / "src.bin"
    src.write_bytes(b"bytes")
    await c.upload_file("/workspace/c.bin", src)
    assert (await c.download_file("/workspace/c.bin", tmp_path / "c.bin")).read_bytes() == b"bytes"
    assert [e.name async for e in c.iter_list("/workspace", page_size=1)] == ["a.md", "b.bin", "c.bin"]
    assert (await c.list("/workspace")).entries[0].name == "a.md"
    assert (await c.delete("/workspace/c.bin")).deleted == 1
    with pytest.raises(skillsvc.NotFound):
        await c.read("/workspace/c.bin")
    with pytest.raises(skillsvc.NotFound):
        await c.download("/workspace/c.bin")

    assert {x.name for x in (await c.list_categories()).categories} == {"data", "writing"}
    assert sorted([s.name async for s in c.iter_skills(page_size=2)]) == ["commit-message", "csv-summary", "release-notes"]
    assert (await c.list_skills(category="writing")).skills[0].category == "writing"
    assert "csv-summary" in (await c.format_skills(format="markdown")).text
    assert (await c.get_skill("csv-summary")).files[0].path == "scripts/summarize.py"
    assert "Base directory" in (await c.render_skill("release-notes")).text
    assert "import" in (await c.read_skill_file("csv-summary", "scripts/summarize.py")).content
    assert (await c.search_skills("CSV file columns")).results[0].skill.name == "csv-summary"
    folder = await c.export_skill("release-notes", tmp_path / "export")
    assert (folder / "references/style.md").exists()
    assert (await c.set_skill_enabled("commit-message", True)).skill.name == "commit-message"

    admin = c.with_identity(user=None, thread=None)
    user = "py-aadmin-" + uuid.uuid4().hex[:6]
    await admin.put_library_file("x/s/SKILL.md", b"---\nname: s\ndescription: A skill.\n---\nbody\n", user=user)
    await admin.drop_skill_index(user=user)
    assert (await admin.set_user_skill_enabled(user, "s", False)).skill.disabled
    await admin.delete_library_file("x/s/SKILL.md", user=user)


def test_pin_library(skillsvc_env) -> None:
    """A pinned thread keeps the library it started with; an unpinned one
    sees a skill added after (README "Pinned threads")."""
    env = skillsvc_env
    name = "pin-" + uuid.uuid4().hex[:8]
    with Client(env.grpc_addr, user=env.user, thread=thread(), pin_library=True) as pinned:
        before = pinned.list_skills(page_size=1000)
        live = pinned.with_identity(pin_library=False)
        body = f"---\nname: {name}\ndescription: Added after the pin.\n---\nBody.\n".encode()
        pinned.put_library_file(f"{name}/SKILL.md", body, user=env.user)
        try:
            after = pinned.list_skills(page_size=1000)
            assert after.library_digest == before.library_digest
            assert name not in [s.name for s in after.skills]
            assert name in [s.name for s in live.list_skills(page_size=1000).skills]
        finally:
            pinned.delete_library_file(f"{name}/SKILL.md", user=env.user)


def _publish(c: Client, name: str, files: dict[str, bytes]) -> str:
    """Publishes a skill to the caller's library with LibraryService (which
    the client leaves to skillctl); returns the version id."""
    from skillsvc.v1 import library_pb2, library_pb2_grpc

    def requests():
        yield library_pb2.PublishSkillRequest(header=library_pb2.PublishSkillHeader(name=name))
        for path, data in files.items():
            yield library_pb2.PublishSkillRequest(chunk=library_pb2.FileChunk(path=path, data=data))

    stub = library_pb2_grpc.LibraryServiceStub(c._channel)
    return stub.PublishSkill(requests(), metadata=c.identity.metadata(), timeout=30).version.id


def test_versions_and_watch(skillsvc_env, tmp_path: Path) -> None:
    user = "py-ver-" + uuid.uuid4().hex[:6]
    with Client(skillsvc_env.grpc_addr, user=user, thread=thread()) as c:
        md = "---\nname: poem\ndescription: Write a poem.\n---\n{} for $ARGUMENTS.\n"
        v1 = _publish(c, "poem", {"SKILL.md": md.format("Rhymes").encode(), "refs/meter.md": b"iambic\n"})
        listed = c.list_skills().library_digest
        _publish(c, "poem", {"SKILL.md": md.format("Free verse").encode(), "refs/meter.md": b"none\n"})

        assert "Rhymes" in c.get_skill("poem", version=v1).raw
        assert "Free verse" in c.get_skill("poem").raw
        assert "Rhymes for spring." in c.render_skill("poem", arguments="spring", version=v1[:19]).text
        assert c.read_skill_file("poem", "refs/meter.md", version=v1).content == "iambic\n"
        assert (c.export_skill("poem", tmp_path, version=v1) / "refs/meter.md").read_text() == "iambic\n"
        with pytest.raises(skillsvc.NotFound):
            c.get_skill("poem", version="no-such-label")

        # A watch resumed from the listing before the second version
        # starts with that change.
        watch = c.watch_skills(listed)
        first = next(watch)
        assert not first.reset
        assert [(ch.name, skills_pb2.SkillChange.Kind.Name(ch.kind)) for ch in first.changes] == [("poem", "KIND_CHANGED")]
        c.set_skill_enabled("poem", False)
        nxt = next(watch)
        assert [ch.name for ch in nxt.changes] == ["poem"] and nxt.library_digest == c.list_skills(include_disabled=True).library_digest
        watch.close()


async def test_async_watch(aclient: AsyncClient) -> None:
    listed = (await aclient.list_skills()).library_digest
    watch = aclient.watch_skills()
    first = await anext(watch)
    assert first.library_digest == listed and not first.changes and not first.reset
    await watch.aclose()


def test_teams(skillsvc_env) -> None:
    """A member of a team reads its library between the shared one and its
    own; another user not in the team does not; a protected team skill is
    not replaced by the member's namesake (README "Teams and protected
    skills")."""
    env = skillsvc_env
    team = "py-team-" + uuid.uuid4().hex[:6]
    name = "team-" + uuid.uuid4().hex[:6]
    body = f"---\nname: {name}\ndescription: The team's.\n---\nBody.\n".encode()
    with Client(env.grpc_addr, user=env.user, thread=thread(), teams=team) as member:
        outsider = member.with_identity(teams=None)
        member.put_library_file(f"{name}/SKILL.md", body, team=team)
        try:
            got = member.get_skill(name).skill
            assert (got.layer, got.path) == (f"team:{team}", f"/skills/{name}")
            assert name not in [s.name for s in outsider.list_skills(page_size=1000).skills]
            mine = f"---\nname: {name}\ndescription: Mine.\n---\nMine.\n".encode()
            member.put_library_file(f"my-{name}/SKILL.md", mine, user=env.user)
            try:
                assert member.get_skill(name).skill.layer == "user"
                assert member.set_skill_protected(name, team=team).names == [name]
                assert member.list_protected_skills(team=team).names == [name]
                assert member.get_skill(name).skill.layer == f"team:{team}"
                listed = {s.path: s for s in member.list_skills(page_size=1000).skills}
                assert any("protected by an administrator" in w for w in listed[f"/skills/my-{name}"].warnings)
            finally:
                member.delete_library_file(f"my-{name}/SKILL.md", user=env.user)
        finally:
            member.delete_library_file(f"{name}/SKILL.md", team=team)
