"""Deep Agents ``execute`` on SkillsvcBackend, against the real binary on
MinIO: a Deep Agent with a scripted model runs a skill's script (an
"exec-test" skill published to the user's library here) on a file in its
/workspace, and the script's output file appears in the thread's
/workspace. Then, on the backend itself: timeouts, the output cap, the
bubblewrap confinement (no network, no host files, /skills read-only), a
/skills path that names no skill, threads kept apart, and the ``execute``
option. Without bubblewrap the bwrap cases fail when
SKILLSVC_REQUIRE_SERVERS=1 (as make test sets), else they are skipped."""

from __future__ import annotations

import os
import socket
import uuid
from pathlib import Path

import pytest
from deepagents import create_deep_agent
from deepagents.backends.protocol import SandboxBackendProtocol
from deepagents.middleware.filesystem import supports_execution
from langchain_core.messages import AIMessage, ToolMessage

import skillsvc
from skillsvc import Client, runner
from skillsvc.deepagents import SkillsvcBackend, SkillsvcSandboxBackend
from skillsvc.testing import live_processes
from skillsvc.testing_models import ScriptedChatModel, script, tool_call

SKILL = "/skills/tools/exec-test"
FILES = {
    "SKILL.md": "---\nname: exec-test\ndescription: Counts the words of a file.\n---\n"
    "Run `python3 /skills/tools/exec-test/scripts/count.py FILE`.\n",
    # Counts a file's words, writes counts.json in the working directory.
    "scripts/count.py": """
import json, os, sys
path = sys.argv[1]
words = open(path).read().split()
with open("counts.json", "w") as f:
    json.dump({"words": len(words), "cwd": os.getcwd()}, f)
print(f"{len(words)} words in {path}")
print("counted", file=sys.stderr)
""",
    # Reports what the sandbox let it do, one line each.
    "scripts/probe.py": """
import os, socket, sys
port, secret = int(sys.argv[1]), sys.argv[2]
try:
    socket.create_connection(("127.0.0.1", port), timeout=5).close()
    print("connect: yes")
except OSError:
    print("connect: no")
for path in ("/etc/hostname", secret):
    try:
        open(path).read()
        print("read: yes")
    except OSError:
        print("read: no")
try:
    open(os.path.join(os.path.dirname(__file__), "planted.txt"), "w").write("x")
    print("write skill: yes")
except OSError:
    print("write skill: no")
""",
}


def require_bwrap() -> None:
    if not runner.bwrap_available():
        if os.environ.get("SKILLSVC_REQUIRE_SERVERS") == "1":
            pytest.fail("bubblewrap is not available (apt-get install -y bubblewrap) and SKILLSVC_REQUIRE_SERVERS=1")
        pytest.skip("bubblewrap is not available")


@pytest.fixture(scope="module")
def library(skillsvc_env):
    user = "py-exec-" + uuid.uuid4().hex[:6]
    with Client(skillsvc_env.grpc_addr) as admin:
        for path, text in FILES.items():
            admin.put_library_file(f"tools/exec-test/{path}", text.lstrip("\n").encode(), user=user)
        # A skill outside any category: /skills/solo.
        admin.put_library_file("solo/SKILL.md", b"---\nname: solo\ndescription: Says hello.\n---\nRun hello.sh.\n", user=user)
        admin.put_library_file("solo/hello.sh", b'echo "hello from $(dirname "$0")"\n', user=user)
        admin.drop_skill_index(user=user)
    return user


@pytest.fixture
def thread() -> str:
    return "py-exec-" + uuid.uuid4().hex[:10]


@pytest.fixture
def client(skillsvc_env, library, thread):
    with Client(skillsvc_env.grpc_addr, user=library, thread=thread) as c:
        yield c


@pytest.fixture
def backend(skillsvc_env, library, thread, tmp_path: Path):
    """A backend pinned to the test's thread, under bubblewrap."""
    require_bwrap()
    b = SkillsvcBackend(skillsvc_env.grpc_addr, user=library, thread=thread, execute="bwrap", cache_dir=str(tmp_path / "cache"))
    yield b
    b.close()


COUNT = f"python3 {SKILL}/scripts/count.py /workspace/notes/words.txt"


def _agent_turns() -> list[AIMessage | str]:
    return [
        tool_call("execute", "x1", command=COUNT),
        tool_call("read_file", "x2", file_path="/workspace/counts.json"),
        tool_call("execute", "x3", command="sleep 30", timeout=1),
        tool_call("execute", "x4", command="python3 /skills/tools/no-such-skill/scripts/x.py"),
        AIMessage(content="The file has 3 words."),
    ]


def _check_agent(result: dict, client: Client) -> None:
    msgs = {m.tool_call_id: m for m in result["messages"] if isinstance(m, ToolMessage)}
    ran = msgs["x1"]
    assert ran.status == "success" and ran.artifact == {"truncated": False, "exit_code": 0}
    assert ran.content == "3 words in /workspace/notes/words.txt\ncounted\n\n[Command succeeded with exit code 0]"
    # The script wrote counts.json in its working directory, the scratch
    # /workspace; it is back in the thread's /workspace.
    assert '"words": 3' in msgs["x2"].content and '"cwd": "/workspace"' in msgs["x2"].content
    assert client.download("/workspace/counts.json") == b'{"words": 3, "cwd": "/workspace"}'
    killed = msgs["x3"]
    assert killed.status == "success" and killed.artifact == {"truncated": False}  # no exit code
    assert killed.content.endswith("killed after 1 second, its timeout; what it wrote in /workspace was not kept.]")
    missing = msgs["x4"]
    assert missing.status == "error" and missing.artifact is None
    assert missing.content.startswith("Error: Invalid parameter. /skills/tools/no-such-skill/scripts/x.py is in no skill")
    assert result["messages"][-1].content == "The file has 3 words."


def test_deep_agent_runs_a_skill_script(skillsvc_env, library, client: Client, thread: str, tmp_path: Path) -> None:
    require_bwrap()
    client.write("/workspace/notes/words.txt", "one two three\n")
    backend = SkillsvcBackend(skillsvc_env.grpc_addr, user=library, cache_dir=str(tmp_path / "cache"))
    # By default, with bubblewrap here, the backend executes.
    assert isinstance(backend, SkillsvcSandboxBackend) and supports_execution(backend)
    agent = create_deep_agent(model=ScriptedChatModel(messages=script(*_agent_turns())), backend=backend)
    result = agent.invoke({"messages": [{"role": "user", "content": "Count the words of notes/words.txt"}]}, {"configurable": {"thread_id": thread}})
    _check_agent(result, client)
    backend.close()


async def test_deep_agent_runs_a_skill_script_async(skillsvc_env, library, client: Client, thread: str, tmp_path: Path) -> None:
    require_bwrap()
    client.write("/workspace/notes/words.txt", "one two three\n")
    backend = SkillsvcBackend(skillsvc_env.grpc_addr, user=library, cache_dir=str(tmp_path / "cache"))
    agent = create_deep_agent(model=ScriptedChatModel(messages=script(*_agent_turns())), backend=backend)
    result = await agent.ainvoke({"messages": [{"role": "user", "content": "Count the words of notes/words.txt"}]}, {"configurable": {"thread_id": thread}})
    _check_agent(result, client)
    await backend.aclose()


@pytest.mark.parametrize("sandbox", ["bwrap", "none"])
def test_timeout_kills_the_command_and_its_children(skillsvc_env, library, client: Client, thread: str, tmp_path: Path, sandbox: str) -> None:
    if sandbox == "bwrap":
        require_bwrap()
    token = uuid.uuid4().hex
    with pytest.warns(RuntimeWarning) if sandbox == "none" else _nothing():
        b = SkillsvcBackend(skillsvc_env.grpc_addr, user=library, thread=thread, execute=sandbox, cache_dir=str(tmp_path / "cache"))
    r = b.execute(f"echo started; echo partial > /workspace/partial.txt; python3 -c 'import time; time.sleep(60)' {token} & wait", timeout=1)
    assert r.exit_code is None and not r.truncated
    assert r.output == "started\n[The command was killed after 1 second, its timeout; what it wrote in /workspace was not kept.]"
    assert live_processes(token) == []
    with pytest.raises(skillsvc.NotFound):
        client.stat("/workspace/partial.txt")
    # The backend's own default, for a call without one.
    short = SkillsvcBackend(skillsvc_env.grpc_addr, user=library, thread=thread, execute=b._sandbox, execute_timeout=1, cache_dir=str(tmp_path / "cache"))
    assert short.execute("sleep 30").output.endswith("killed after 1 second, its timeout; what it wrote in /workspace was not kept.]")
    for bad in (0, -1):
        with pytest.raises(ValueError, match="positive"):
            b.execute("true", timeout=bad)
    b.close()
    short.close()


class _nothing:
    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: object) -> None:
        return None


def test_output_cap(backend: SkillsvcBackend, client: Client) -> None:
    # Past the cap (1 MiB, the default) on stdout: killed, the first bytes kept.
    r = backend.execute("echo keep > /workspace/kept.txt; head -c 2000000 /dev/zero | tr '\\0' x; echo never")
    assert r.truncated and r.exit_code is None
    first, note = r.output.rsplit("\n", 1)
    assert first == "x" * (1 << 20)
    assert note == f"[The command was killed: its output passed {1 << 20} bytes; what it wrote in /workspace was not kept.]"
    with pytest.raises(skillsvc.NotFound):
        client.stat("/workspace/kept.txt")
    # Under the cap on each stream, over it together: cut, and the command
    # ran to its end, so its files are kept.
    r = backend.execute("echo keep > /workspace/kept.txt; head -c 600000 /dev/zero | tr '\\0' o; head -c 600000 /dev/zero | tr '\\0' e >&2")
    assert r.truncated and r.exit_code == 0
    assert r.output == "o" * 600000 + "\n" + "e" * ((1 << 20) - 600001)
    assert client.read("/workspace/kept.txt").content == "keep"


def test_output_is_stdout_then_stderr(backend: SkillsvcBackend) -> None:
    r = backend.execute("echo out; echo err >&2; printf more; exit 3")
    assert (r.output, r.exit_code, r.truncated) == ("out\nmore\nerr\n", 3, False)
    r = backend.execute("true")
    assert (r.output, r.exit_code) == ("", 0)


def test_bwrap_confines(backend: SkillsvcBackend, tmp_path: Path) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("host secret")
    with socket.create_server(("127.0.0.1", 0)) as listener:
        port = listener.getsockname()[1]
        r = backend.execute(f"python3 {SKILL}/scripts/probe.py {port} {secret}")
    assert r.output == "connect: no\nread: no\nread: no\nwrite skill: no\n" and r.exit_code == 0
    r = backend.execute(f"cat /etc/hostname {secret}; touch {SKILL}/new; find /skills -maxdepth 2; echo x > /usr/x")
    assert r.exit_code != 0
    assert f"cat: {secret}: No such file or directory" in r.output and "cat: /etc/hostname: No such file or directory" in r.output
    assert f"touch: cannot touch '{SKILL}/new': Read-only file system" in r.output
    assert "/skills\n/skills/tools\n/skills/tools/exec-test\n" in r.output  # the skills the command named, only
    assert "/usr/x: Read-only file system" in r.output
    # The cached copy is as it was.
    mat = runner.materialize(backend.client(), SKILL, cache_dir=tmp_path / "cache")
    assert sorted(p.name for p in (mat.path / "scripts").iterdir()) == ["count.py", "probe.py"]


def test_a_path_in_no_skill(backend: SkillsvcBackend) -> None:
    for command, path in [
        ("cat /skills/tools/nope/SKILL.md", "/skills/tools/nope/SKILL.md"),
        ("ls /skills/tools", "/skills/tools"),
        ("cat /skills/../etc/passwd", "/skills/../etc/passwd"),
    ]:
        with pytest.raises(ValueError, match="is in no skill") as exc:
            backend.execute(command)
        assert str(exc.value).startswith(f"{path} is in no skill")
    # Other mentions of /skills are left alone: not a skill, no error.
    assert backend.execute("echo $HOME/skills x/skills/y").exit_code == 0


def test_several_skills_in_one_command(backend: SkillsvcBackend) -> None:
    r = backend.execute(f"bash /skills/solo/hello.sh && head -2 {SKILL}/SKILL.md && find /skills -maxdepth 1 | sort")
    assert r.output == "hello from /skills/solo\n---\nname: exec-test\n/skills\n/skills/solo\n/skills/tools\n" and r.exit_code == 0


def test_threads_kept_apart(skillsvc_env, library, backend: SkillsvcBackend, client: Client) -> None:
    other = client.with_identity(thread="py-exec-" + uuid.uuid4().hex[:10])
    other.write("/workspace/theirs.txt", "theirs")
    client.write("/workspace/mine.txt", "mine\n")
    r = backend.execute("ls -A /workspace; echo new > /workspace/new.txt; echo changed >> mine.txt; rm theirs.txt 2>/dev/null; true")
    assert r.output == ".home\nmine.txt\n" and r.exit_code == 0
    assert [e.name for e in other.iter_list("/workspace")] == ["theirs.txt"]
    assert other.read("/workspace/theirs.txt").content == "theirs"
    assert client.download("/workspace/mine.txt") == b"mine\nchanged\n"
    assert client.read("/workspace/new.txt").content == "new"


def test_plain_subprocess_rewrites_paths(skillsvc_env, library, client: Client, thread: str, tmp_path: Path) -> None:
    client.write("/workspace/notes/words.txt", "a b c d\n")
    with pytest.warns(RuntimeWarning, match="unconfined"):
        b = SkillsvcBackend(skillsvc_env.grpc_addr, user=library, thread=thread, execute="none", cache_dir=str(tmp_path / "cache"))
    assert isinstance(b, SkillsvcSandboxBackend)
    r = b.execute(COUNT + ' && echo "$PWD" && echo $HOME/workspace')
    lines = r.output.splitlines()
    assert r.exit_code == 0 and lines[0].startswith("4 words in /") and lines[0].endswith("/workspace/notes/words.txt")
    # /workspace and /skills where the command names them are local paths;
    # $HOME/workspace is not /workspace.
    assert lines[0] != "4 words in /workspace/notes/words.txt" and lines[1] == lines[0][len("4 words in ") : -len("/notes/words.txt")]
    assert lines[2] == lines[1] + "/.home/workspace" and lines[3] == "counted"
    assert client.download("/workspace/counts.json").startswith(b'{"words": 4')
    b.close()


def test_execute_option(skillsvc_env, library, monkeypatch, tmp_path: Path) -> None:
    addr = skillsvc_env.grpc_addr
    off = SkillsvcBackend(addr, user=library, thread="t", execute=False)
    assert type(off) is SkillsvcBackend and not isinstance(off, SandboxBackendProtocol) and not supports_execution(off)
    on = SkillsvcBackend(addr, user=library, thread="t", execute=runner.SubprocessSandbox())
    assert isinstance(on, SandboxBackendProtocol) and on.id.startswith("skillsvc-")
    with pytest.warns(RuntimeWarning, match="unconfined"):
        assert on.id != SkillsvcSandboxBackend(addr, user=library, thread="t", execute="none").id
    with pytest.raises(ValueError, match="execute must be"):
        SkillsvcBackend(addr, user=library, execute="yes")
    # Without bubblewrap: "auto" offers no execute tool (no unconfined
    # fallback for a model's commands), "bwrap" refuses.
    monkeypatch.setattr(runner, "_probe", False)
    assert type(SkillsvcBackend(addr, user=library, thread="t")) is SkillsvcBackend
    with pytest.raises(skillsvc.SandboxUnavailable, match="bubblewrap"):
        SkillsvcBackend(addr, user=library, execute="bwrap")
    with pytest.raises(skillsvc.SandboxUnavailable, match="no sandbox"):
        SkillsvcSandboxBackend(addr, user=library, execute=False)
    # A copy keeps its class and sandbox.
    import copy

    assert type(copy.copy(off)) is SkillsvcBackend and type(copy.copy(on)) is SkillsvcSandboxBackend and copy.copy(on).id == on.id
    # Without execution the agent's execute tool says so.
    agent = create_deep_agent(model=ScriptedChatModel(messages=script(tool_call("execute", "n1", command="true"), "done")), backend=off)
    result = agent.invoke({"messages": [{"role": "user", "content": "run"}]}, {"configurable": {"thread_id": "t"}})
    msg = next(m for m in result["messages"] if isinstance(m, ToolMessage))
    assert msg.status == "error" and "Execution not available" in msg.content


def test_service_errors_are_output(backend: SkillsvcBackend, monkeypatch) -> None:
    # Errors of the machinery, not of the command, come back as output.
    monkeypatch.setattr(runner, "MAX_WORKSPACE_FILES", 0)
    backend.client().write("/workspace/a.txt", "a")
    r = backend.execute("true")
    assert r.exit_code is None and r.output.startswith("Error (WORKSPACE_TOO_LARGE): the thread's /workspace holds more than 0 files")
