"""The script runner (skillsvc.runner) against the real binary on MinIO:
what this client adds to the contract (its API's checks, the cache, the async
client, a venv's python, the caps set low); the contract's own cases are the
runners' shared fixture, in test_runner_conformance.py. A "runner-test" skill
is uploaded here, its scripts run under bubblewrap and as plain subprocesses. Without bubblewrap the bwrap cases fail when
SKILLSVC_REQUIRE_SERVERS=1 (as make test sets), else they are skipped."""

from __future__ import annotations

import os
import sys
import uuid
from pathlib import Path

import grpc
import pytest

import skillsvc
from skillsvc import AsyncClient, Client, runner

SKILL_MD = b"---\nname: runner-test\ndescription: Scripts for the runner tests.\n---\nRun them.\n"
SLOW_MD = b'---\nname: runner-slow\ndescription: A skill whose scripts get 1 second.\nmetadata:\n  timeout: "1"\n---\nSlow.\n'

SCRIPTS = {
    # The JSON contract: echoes what it was given, exits with args["exit"].
    "scripts/echo.py": """
import json, os, sys
args = sys.argv[1]
print(json.dumps({"argv": args, "stdin": sys.stdin.read(), "env": dict(os.environ), "cwd": os.getcwd()}))
sys.exit(json.loads(args).get("exit", 0))
""",
    "scripts/plain.sh": 'echo "args:$*"\necho "to stderr" >&2\nexit 3\n',
    "scripts/bad.py": "print('not json')\n",
    "scripts/tool": '#!/usr/bin/env python3\nimport json\nprint(json.dumps({"via": "shebang"}))\n',
    "scripts/big.py": "import sys\nopen('big.bin', 'wb').write(b'x' * int(sys.argv[1]))\n",
    "scripts/pkg.py": "import json, sys\nimport google.protobuf\nprint(json.dumps({'prefix': sys.prefix, 'protobuf': google.protobuf.__version__}))\n",
    # Writes into its working directory.
    "scripts/write.py": """
import json, os
open("out.txt", "w").write("made by the script")
os.makedirs("sub", exist_ok=True)
open("sub/result.json", "w").write('{"ok": true}')
open("input.txt", "a").write(" and more")
os.makedirs(os.environ["HOME"], exist_ok=True)
open(os.path.join(os.environ["HOME"], "cache"), "w").write("private")
os.symlink("/etc/hostname", "link.txt")
print(json.dumps({"files": sorted(os.listdir("."))}))
""",
}


def require_bwrap() -> None:
    if not runner.bwrap_available():
        if os.environ.get("SKILLSVC_REQUIRE_SERVERS") == "1":
            pytest.fail("bubblewrap is not available (apt-get install -y bubblewrap) and SKILLSVC_REQUIRE_SERVERS=1")
        pytest.skip("bubblewrap is not available")


SANDBOXES = ["bwrap", "none"]


@pytest.fixture(scope="module")
def library(skillsvc_env):
    user = "py-runner-" + uuid.uuid4().hex[:6]
    with Client(skillsvc_env.grpc_addr) as admin:
        admin.put_library_file("tools/runner-test/SKILL.md", SKILL_MD, user=user)
        for path, text in SCRIPTS.items():
            admin.put_library_file(f"tools/runner-test/{path}", text.lstrip("\n").encode(), user=user)
        admin.put_library_file("tools/runner-slow/SKILL.md", SLOW_MD, user=user)
        admin.put_library_file("tools/runner-slow/scripts/sleep.py", b"import time\ntime.sleep(30)\n", user=user)
        admin.drop_skill_index(user=user)
    return user


@pytest.fixture
def client(skillsvc_env, library):
    with Client(skillsvc_env.grpc_addr, user=library, thread="py-" + uuid.uuid4().hex[:12]) as c:
        yield c


@pytest.fixture
def cache(tmp_path: Path) -> Path:
    return tmp_path / "cache"


def run(client: Client, cache: Path, script: str, sandbox: str = "none", **kw):
    if sandbox == "bwrap":
        require_bwrap()
    return client.run_skill_script("runner-test", script, sandbox=sandbox, cache_dir=cache, **kw)


def test_arguments_checked(client: Client, cache: Path) -> None:
    # The contract's cases are the shared fixture's (test_runner_conformance.py); these are this API's own.
    for bad in [{"args": "a b"}, {"args": ["a"], "json_args": {}}, {"args": [], "timeout": 0}]:
        with pytest.raises(skillsvc.InvalidArgument):
            run(client, cache, "plain.sh", **bad)


def test_bad_output_still_writes_back(client: Client, cache: Path) -> None:
    # big.py prints nothing, which JSON mode refuses; it ended, so what it
    # wrote is written back all the same.
    with pytest.raises(skillsvc.BadOutput) as exc:
        run(client, cache, "big.py", json_args=3)
    assert exc.value.written == ["/workspace/big.bin"]
    assert client.download("/workspace/big.bin") == b"xxx"


def test_script_linked_outside_skill(tmp_path: Path) -> None:
    # ExportSkill carries no symlinks (the archive reader refuses them), so a
    # symlink out is checked on a local folder.
    skill = tmp_path / "skill"
    (skill / "scripts").mkdir(parents=True)
    (skill / "scripts" / "out.py").symlink_to("/etc/passwd")
    with pytest.raises(skillsvc.ScriptOutsideSkill, match="links outside"):
        runner.resolve_script(skill, "out.py")


def test_timeout_from_frontmatter(client: Client, cache: Path) -> None:
    with pytest.raises(skillsvc.ScriptTimeout, match="timeout of 1s"):
        client.run_skill_script("runner-slow", "sleep.py", args=[], sandbox="none", cache_dir=cache)


def test_materialize_cache(client: Client, cache: Path, monkeypatch) -> None:
    monkeypatch.setenv("SKILLSVC_SKILL_CACHE", str(cache))
    first = client.materialize_skill("runner-test")
    assert first.fetched and first.bytes > 0 and first.path == cache / first.manifest_digest.removeprefix("sha256:")
    assert (first.path / "scripts" / "echo.py").read_text().startswith("import json")
    assert not os.stat(first.path / "SKILL.md").st_mode & 0o222  # read-only
    assert os.stat(first.path / "scripts" / "tool").st_mode & 0o111  # executable as exported
    # Another thread on the same library state copies nothing.
    second = client.with_identity(thread="py-" + uuid.uuid4().hex[:12]).materialize_skill("runner-test")
    assert (second.fetched, second.bytes, second.path) == (False, 0, first.path)
    # A cached file whose size changed is not used: fetched again.
    victim = first.path / "scripts" / "bad.py"
    os.chmod(victim, 0o644)
    victim.write_text("print('{\"tampered\": true}')\n")
    third = client.materialize_skill("runner-test")
    assert third.fetched and victim.read_text() == "print('not json')\n"
    assert [p.name for p in cache.iterdir()] == [first.path.name]  # no temp dirs left


def test_materialize_concurrently(client: Client, cache: Path) -> None:
    # Threads racing on an empty cache all end with the one published copy.
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(4) as pool:
        got = list(pool.map(lambda _: client.materialize_skill("runner-test", cache_dir=cache), range(4)))
    assert len({m.path for m in got}) == 1 and any(m.fetched for m in got)
    assert [p.name for p in cache.iterdir()] == [got[0].path.name]
    assert not client.materialize_skill("runner-test", cache_dir=cache).fetched


def test_materialize_missing_skill(client: Client, cache: Path) -> None:
    with pytest.raises(skillsvc.NotFound):
        client.materialize_skill("no-such-skill", cache_dir=cache)


class OtherSkillExport:
    """A client whose export is another skill's, as when the skill changed
    between GetSkill and the fetch."""

    def __init__(self, client: Client, other: str) -> None:
        self.client, self.other = client, other

    def get_skill(self, *args, **kwargs):
        return self.client.get_skill(*args, **kwargs)

    def export_skill(self, _skill, *args, **kwargs):
        return self.client.export_skill(self.other, *args, **kwargs)


def test_materialize_mismatch_aborted(client: Client, cache: Path) -> None:
    # ABORTED (fetch again), as Go's VerifyFailed and TypeScript's
    # ManifestMismatchError: nothing in an export tells a change meanwhile
    # from damaged bytes. Nothing is kept.
    with pytest.raises(runner.ManifestMismatch) as got:
        runner.materialize(OtherSkillExport(client, "runner-slow"), "runner-test", cache_dir=cache)
    assert isinstance(got.value, skillsvc.Aborted) and got.value.code == grpc.StatusCode.ABORTED
    assert not cache.exists() or list(cache.iterdir()) == []


def test_bwrap_unavailable(client: Client, cache: Path, monkeypatch) -> None:
    monkeypatch.setattr(runner, "_probe", False)
    with pytest.raises(skillsvc.SandboxUnavailable, match="bubblewrap"):
        client.run_skill_script("runner-test", "echo.py", json_args={}, sandbox="bwrap", cache_dir=cache)
    monkeypatch.setattr(runner, "_warned", False)
    with pytest.warns(RuntimeWarning, match="unconfined"):
        r = client.run_skill_script("runner-test", "echo.py", json_args={}, cache_dir=cache)
    assert r.sandbox == "none"


async def test_async_client(skillsvc_env, library, cache: Path) -> None:
    async with AsyncClient(skillsvc_env.grpc_addr, user=library, thread="py-" + uuid.uuid4().hex[:12]) as c:
        m = await c.materialize_skill("runner-test", cache_dir=cache)
        assert m.fetched
        r = await c.run_skill_script("runner-test", "write.py", json_args={}, sandbox="none", cache_dir=cache)
        assert "/workspace/out.txt" in r.written
        assert (await c.read("/workspace/out.txt")).content == "made by the script"


@pytest.mark.parametrize("sandbox", SANDBOXES)
def test_venv_interpreter(client: Client, cache: Path, sandbox: str) -> None:
    # A venv's python (this one) with its packages, bound read-only into bwrap.
    r = run(client, cache, "pkg.py", sandbox, json_args={}, interpreters={".py": sys.executable})
    assert r.output["prefix"] == sys.prefix and r.output["protobuf"]


def test_workspace_too_large(client: Client, cache: Path, monkeypatch) -> None:
    monkeypatch.setattr(runner, "MAX_WORKSPACE_BYTES", 1000)
    with pytest.raises(skillsvc.WorkspaceTooLarge, match="nothing was written back") as exc:
        run(client, cache, "big.py", args=["2000"])
    assert exc.value.exit_code == 0
    with pytest.raises(skillsvc.NotFound):
        client.stat("/workspace/big.bin")
    assert run(client, cache, "big.py", args=["900"]).written == ["/workspace/big.bin"]
    # Copying in: more files than the cap, refused before the script runs.
    monkeypatch.setattr(runner, "MAX_WORKSPACE_FILES", 2)
    client.write("/workspace/a.txt", "a")
    client.write("/workspace/b/c.txt", "c")
    with pytest.raises(skillsvc.WorkspaceTooLarge, match="too large to copy"):
        run(client, cache, "big.py", args=["1"])
    assert run(client, cache, "big.py", args=["1"], workspace=False).written == []


def test_over_limits_refused(skillsvc_env, cache: Path) -> None:
    # Over the manifest limits: more than 512 files.
    user = "py-runner-big-" + uuid.uuid4().hex[:6]
    with Client(skillsvc_env.grpc_addr) as admin, Client(skillsvc_env.grpc_addr, user=user, thread="t") as c:
        admin.put_library_file("tools/huge/SKILL.md", b"---\nname: huge\ndescription: Many files.\n---\n", user=user)
        for i in range(512):
            admin.put_library_file(f"tools/huge/data/{i}.txt", b"x", user=user)
        admin.drop_skill_index(user=user)
        with pytest.raises(skillsvc.FailedPrecondition, match="over the manifest limits"):
            c.materialize_skill("huge", cache_dir=cache)


@pytest.mark.parametrize(
    "value,want",
    [("120", 120.0), (" 5 ", 5.0), ("1.5", 1.5), ("", runner.DEFAULT_TIMEOUT), ("0", runner.DEFAULT_TIMEOUT),
     ("-3", runner.DEFAULT_TIMEOUT), ("1m", runner.DEFAULT_TIMEOUT), ("1e3", runner.DEFAULT_TIMEOUT),
     ("NaN", runner.DEFAULT_TIMEOUT), ("+2", runner.DEFAULT_TIMEOUT), ("٣", runner.DEFAULT_TIMEOUT)],
)
def test_skill_timeout(value: str, want: float) -> None:
    # Decimal seconds only, as the Go and TypeScript runners read it.
    assert runner.skill_timeout({"timeout": value}) == want
