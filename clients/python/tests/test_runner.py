"""The script runner (skillsvc.runner) against the real binary on MinIO:
a "runner-test" skill uploaded here, its scripts run under bubblewrap and as
plain subprocesses. Without bubblewrap the bwrap cases fail when
SKILLSVC_REQUIRE_SERVERS=1 (as make test sets), else they are skipped."""

from __future__ import annotations

import json
import os
import socket
import sys
import uuid
from pathlib import Path

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
    "scripts/term.sh": "echo dying\nkill -TERM $$\n",
    "scripts/two.py": "print('{}'); print('{}')\n",
    "scripts/list.py": "print('[1, 2]')\n",
    "scripts/tool": '#!/usr/bin/env python3\nimport json\nprint(json.dumps({"via": "shebang"}))\n',
    "scripts/hello.js": "console.log(JSON.stringify({node: true, arg: JSON.parse(process.argv[2])}))\n",
    "scripts/noisy.py": "import sys\nsys.stdout.write('x' * 5000)\n",
    "scripts/notes.txt": "not a script\n",
    "top.py": "print('{\"where\": \"root\"}')\n",
    # Starts a child that would write a file later, then hangs.
    "scripts/hang.py": """
import json, subprocess, sys, time
target, token = sys.argv[1], sys.argv[2]
code = "import sys, time; time.sleep(30); open(sys.argv[1], 'w').write('late')"
child = subprocess.Popen([sys.executable, "-c", code, target, token])
print(json.dumps({"child": child.pid}), flush=True)
time.sleep(60)
""",
    "scripts/big.py": "import sys\nopen('big.bin', 'wb').write(b'x' * int(sys.argv[1]))\n",
    "scripts/alloc.py": "import sys\nblock = bytearray(int(sys.argv[1]))\nprint('allocated')\n",
    "scripts/pkg.py": "import json, sys\nimport google.protobuf\nprint(json.dumps({'prefix': sys.prefix, 'protobuf': google.protobuf.__version__}))\n",
    # Reports what the sandbox let it do.
    "scripts/probe.py": """
import json, os, socket, sys
a = json.loads(sys.argv[1])
out = {}
try:
    socket.create_connection(("127.0.0.1", a["port"]), timeout=5).close()
    out["connect"] = True
except OSError as e:
    out["connect"] = False
try:
    out["read"] = open(a["read"]).read()
except OSError:
    out["read"] = None
try:
    with open(os.path.join(os.environ["SKILL_DIR"], "scripts", "planted.txt"), "w") as f:
        f.write("x")
    out["write_skill"] = True
except OSError:
    out["write_skill"] = False
print(json.dumps(out))
""",
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


@pytest.mark.parametrize("sandbox", SANDBOXES)
def test_json_contract(client: Client, cache: Path, sandbox: str, monkeypatch) -> None:
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "leak")
    args = {"name": "Zoë", "n": [1, 2.5, None], "exit": 0}
    r = run(client, cache, "echo.py", sandbox, json_args=args)
    assert r.exit_code == 0 and r.sandbox == sandbox
    assert r.output["argv"] == r.output["stdin"] and json.loads(r.output["argv"]) == args
    env = r.output["env"]
    assert sorted(env) == ["HOME", "LANG", "PATH", "PWD", "SKILL_DIR", "SKILL_TIMEOUT", "WORKSPACE"]
    assert env["PATH"] == "/usr/local/bin:/usr/bin:/bin" and env["LANG"] == "C.UTF-8" and env["SKILL_TIMEOUT"] == "60"
    assert r.output["cwd"] == env["WORKSPACE"] == env["PWD"] and env["HOME"] == env["WORKSPACE"] + "/.home"
    if sandbox == "bwrap":
        assert (env["SKILL_DIR"], env["WORKSPACE"]) == ("/skill", "/workspace")
    # A non-zero exit with a JSON object is a result, not an error.
    r = run(client, cache, "scripts/echo.py", sandbox, json_args={"exit": 4}, timeout=30)
    assert r.exit_code == 4 and r.output["env"]["SKILL_TIMEOUT"] == "30"


def test_plain_args_and_exit_code(client: Client, cache: Path) -> None:
    r = run(client, cache, "plain.sh", args=["a b", "c"])
    assert (r.exit_code, r.stdout, r.stderr, r.output) == (3, "args:a b c\n", "to stderr\n", None)
    for bad in [{"args": "a b"}, {"args": ["a"], "json_args": {}}, {"args": [], "timeout": 0}]:
        with pytest.raises(skillsvc.InvalidArgument):
            run(client, cache, "plain.sh", **bad)


@pytest.mark.parametrize("sandbox", SANDBOXES)
def test_killed_by_a_signal(client: Client, cache: Path, sandbox: str) -> None:
    # Its own SIGTERM: 128 + 15, as a shell reports it, in both sandboxes.
    r = run(client, cache, "term.sh", sandbox)
    assert (r.exit_code, r.stdout) == (143, "dying\n")


@pytest.mark.parametrize("script", ["bad.py", "two.py", "list.py"])
def test_bad_output(client: Client, cache: Path, script: str) -> None:
    with pytest.raises(skillsvc.BadOutput, match="one JSON object") as exc:
        run(client, cache, script, json_args={})
    assert exc.value.exit_code == 0 and exc.value.stdout and exc.value.written == []


def test_bad_output_still_writes_back(client: Client, cache: Path) -> None:
    # big.py prints nothing, which JSON mode refuses; it ended, so what it
    # wrote is written back all the same.
    with pytest.raises(skillsvc.BadOutput) as exc:
        run(client, cache, "big.py", json_args=3)
    assert exc.value.written == ["/workspace/big.bin"]
    assert client.download("/workspace/big.bin") == b"xxx"


def test_interpreters(client: Client, cache: Path) -> None:
    assert run(client, cache, "tool", json_args={}).output == {"via": "shebang"}
    assert run(client, cache, "hello.js", json_args=[1]).output == {"node": True, "arg": [1]}
    assert run(client, cache, "top.py", json_args={}).output == {"where": "root"}  # found at the skill's root
    # The interpreters map wins over the defaults: the venv's python, here.
    r = run(client, cache, "echo.py", json_args={}, interpreters={".py": sys.executable})
    assert r.output["argv"] == "{}"
    with pytest.raises(skillsvc.UnknownInterpreter, match="no interpreter known"):
        run(client, cache, "notes.txt", args=[])


def test_script_outside_skill(client: Client, cache: Path, tmp_path: Path) -> None:
    for script in ["../x", "/etc/passwd", "scripts/../../x", "../runner-slow/scripts/sleep.py"]:
        with pytest.raises(skillsvc.ScriptOutsideSkill):
            run(client, cache, script, args=[])
    with pytest.raises(skillsvc.ScriptNotFound):
        run(client, cache, "missing.py", args=[])
    # ExportSkill carries no symlinks (the archive reader refuses them), so a
    # symlink out is checked on a local folder.
    skill = tmp_path / "skill"
    (skill / "scripts").mkdir(parents=True)
    (skill / "scripts" / "out.py").symlink_to("/etc/passwd")
    with pytest.raises(skillsvc.ScriptOutsideSkill, match="links outside"):
        runner.resolve_script(skill, "out.py")


@pytest.mark.parametrize("sandbox", SANDBOXES)
def test_timeout_kills_children(client: Client, cache: Path, tmp_path: Path, sandbox: str) -> None:
    token = uuid.uuid4().hex
    target = str(tmp_path / "late.txt") if sandbox == "none" else "/workspace/late.txt"
    with pytest.raises(skillsvc.ScriptTimeout, match="timeout of 1s") as exc:
        run(client, cache, "hang.py", sandbox, args=[target, token], timeout=1)
    assert '"child"' in exc.value.stdout  # the output so far
    # The child (its command line holds the token) is gone, so its file never appears.
    alive = []
    for pid in os.listdir("/proc"):
        try:
            cmdline = Path("/proc", pid, "cmdline").read_bytes()
            state = Path("/proc", pid, "stat").read_text().rsplit(")", 1)[1].split()[0]
        except (OSError, IndexError):
            continue
        if token.encode() in cmdline and state != "Z":
            alive.append(pid)
    assert alive == []
    if sandbox == "none":
        child = json.loads(exc.value.stdout)["child"]
        with pytest.raises(ProcessLookupError):
            os.killpg(child, 0)  # the script's group, which the child was in
    assert not (tmp_path / "late.txt").exists()
    with pytest.raises(skillsvc.NotFound):
        client.stat("/workspace/late.txt")


def test_timeout_from_frontmatter(client: Client, cache: Path) -> None:
    with pytest.raises(skillsvc.ScriptTimeout, match="timeout of 1s"):
        client.run_skill_script("runner-slow", "sleep.py", args=[], sandbox="none", cache_dir=cache)


def test_output_too_large(client: Client, cache: Path) -> None:
    with pytest.raises(skillsvc.OutputTooLarge) as exc:
        run(client, cache, "noisy.py", args=[], max_output_bytes=1000)
    assert exc.value.stdout == "x" * 1000


def test_bwrap_confines(client: Client, cache: Path, tmp_path: Path) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("host secret")
    with socket.create_server(("127.0.0.1", 0)) as listener:
        args = {"port": listener.getsockname()[1], "read": str(secret)}
        r = run(client, cache, "probe.py", "bwrap", json_args=args)
        assert r.output == {"connect": False, "read": None, "write_skill": False}
        # The same probe with the network allowed reaches the listener.
        assert run(client, cache, "probe.py", "bwrap", json_args=args, network=True).output["connect"] is True
    m = client.materialize_skill("runner-test", cache_dir=cache)
    assert not (m.path / "scripts" / "planted.txt").exists()


@pytest.mark.parametrize("sandbox", SANDBOXES)
def test_workspace_written_back(client: Client, cache: Path, sandbox: str) -> None:
    other = client.with_identity(thread="py-" + uuid.uuid4().hex[:12])
    other.write("/workspace/theirs.txt", "theirs")
    client.write("/workspace/input.txt", "input")
    client.write("/workspace/same.txt", "unchanged")
    r = run(client, cache, "write.py", sandbox, json_args={})
    assert {"input.txt", "same.txt", "out.txt", "sub", ".home"} <= set(r.output["files"])
    assert r.written == ["/workspace/input.txt", "/workspace/out.txt", "/workspace/sub/result.json"]
    assert client.read("/workspace/out.txt").content == "made by the script"
    assert client.read("/workspace/input.txt").content == "input and more"
    assert client.download("/workspace/sub/result.json") == b'{"ok": true}'
    for absent in ["/workspace/.home/cache", "/workspace/link.txt"]:
        with pytest.raises(skillsvc.NotFound):
            client.stat(absent)
    assert [e.name for e in other.iter_list("/workspace")] == ["theirs.txt"]


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


@pytest.mark.parametrize("sandbox", SANDBOXES)
def test_memory_limit(client: Client, cache: Path, sandbox: str) -> None:
    r = run(client, cache, "alloc.py", sandbox, args=[str(512 << 20)], memory_bytes=256 << 20)
    assert r.exit_code != 0 and "MemoryError" in r.stderr
    assert run(client, cache, "alloc.py", sandbox, args=[str(64 << 20)]).stdout == "allocated\n"


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
