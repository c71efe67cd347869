"""Code skills (skillsvc.codeskills) through SkillTools' use_skill, against
the real binary on MinIO: skills with a skill.py published to a user's
library here, run with trust_code=True under bubblewrap and as a plain
subprocess, calling the caller's tools and model through the JSON bridge;
and the same skills without the opt-in, which are not run. Without
bubblewrap the bwrap cases fail when SKILLSVC_REQUIRE_SERVERS=1."""

from __future__ import annotations

import json
import os
import socket
import uuid
from pathlib import Path
from typing import Any

import pytest

import skillsvc
from skillsvc import Client, codeskills, runner
from skillsvc.testing import live_processes
from skillsvc.tools import SkillTools


def skill_md(name: str, extra: str = "") -> bytes:
    return f"---\nname: {name}\ndescription: The {name} code skill for the tests.\n{extra}---\nLook up $ARGUMENTS and report.\n".encode()


# Calls one tool and the model, recovers from an unknown tool, imports a
# module beside it, writes into the workspace and tries the network.
REPORT_PY = """
import json, os, socket
from skillsvc_skill import BridgeError, CodeSkill, SkillResult
import helper

class Report(CodeSkill):
    def execute(self, ctx):
        found = ctx.tools.call("lookup", {"key": ctx.input["key"]})
        answer = ctx.model.complete("Summarize: " + json.dumps(found), temperature=0)
        try:
            ctx.tools.call("no_such_tool", {})
            missing = None
        except BridgeError as e:
            missing = e.kind
        try:
            socket.create_connection(("127.0.0.1", ctx.input["port"]), timeout=5).close()
            net = True
        except OSError:
            net = False
        try:
            open(os.path.join(ctx.skill_dir, "planted.txt"), "w").close()
            wrote_skill = True
        except OSError:
            wrote_skill = False
        try:
            host_file = open(ctx.input["host_file"]).read()
        except OSError:
            host_file = None
        with open("report.txt", "w") as f:
            f.write(helper.title(answer))
        print("a print goes to stdout, not the bridge")
        return SkillResult(
            success=True,
            output={"found": found, "answer": answer, "missing": missing, "network": net, "arguments": ctx.arguments,
                    "wrote_skill": wrote_skill, "host_file": host_file},
            metadata={"skill": ctx.skill, "skill_dir": ctx.skill_dir, "cwd": os.getcwd(), "tools": ctx.tools.names,
                      "instructions": ctx.instructions.strip(), "owner": ctx.metadata.get("owner")},
        )
"""

# Returns while a process it started (holding the bridge's fds) and a
# thread of its own still run: the result stands and the process is killed.
LINGERS_PY = """
import subprocess, sys, threading, time
class S:
    def execute(self, ctx):
        code = "import sys, time; time.sleep(60)"
        subprocess.Popen([sys.executable, "-c", code, ctx.input["token"]], close_fds=False)
        threading.Thread(target=time.sleep, args=(60,)).start()
        return {"output": "done"}
"""

FAILING = {
    "code-raises": "class S:\n    def execute(self, ctx):\n        raise ValueError('the input is wrong')\n",
    "code-noclass": "def execute(ctx):\n    return {'success': True}\n",
    "code-twoclasses": "class A:\n    def execute(self, ctx): pass\nclass B:\n    def execute(self, ctx): pass\n",
    "code-import": "import no_such_module_here\n",
    "code-unknown-tool": "class S:\n    def execute(self, ctx):\n        return {'output': ctx.tools.call('rm_rf', {})}\n",
    "code-tool-fails": "class S:\n    def execute(self, ctx):\n        return {'output': ctx.tools.call('lookup', {'key': 'boom'})}\n",
    # Writes a line that is not JSON to the bridge (its write fd is argv[3]), then waits.
    "code-malformed": "import os, sys, time\nclass S:\n    def execute(self, ctx):\n"
    "        os.write(int(sys.argv[3]), b'this is not json\\n')\n        time.sleep(30)\n",
    "code-array": "import os, sys, time\nclass S:\n    def execute(self, ctx):\n"
    "        os.write(int(sys.argv[3]), b'[1, 2]\\n')\n        time.sleep(30)\n",
    "code-noisy": "import sys\nclass S:\n    def execute(self, ctx):\n        sys.stdout.write('x' * (2 << 20))\n        return {}\n",
    "code-huge-result": "class S:\n    def execute(self, ctx):\n        return {'output': 'y' * (2 << 20)}\n",
    "code-slow": "import subprocess, sys, time\nclass S:\n    def execute(self, ctx):\n"
    "        subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)'])\n        time.sleep(60)\n",
    "code-exits": "import os\nclass S:\n    def execute(self, ctx):\n        os._exit(3)\n",
    "code-bad-result": "class S:\n    def execute(self, ctx):\n        return 42\n",
    "code-not-json": "class S:\n    def execute(self, ctx):\n        return {'output': object()}\n",
    "code-no-model": "class S:\n    def execute(self, ctx):\n        return {'output': ctx.model.complete('hi')}\n",
}

# kind the error starts with, and a phrase it holds.
FAILURES = {
    "code-raises": ("EXCEPTION", "ValueError: the input is wrong"),
    "code-noclass": ("NO_SKILL_CLASS", "no class with an execute(self, ctx) method"),
    "code-twoclasses": ("NO_SKILL_CLASS", "more than one class"),
    "code-import": ("LOAD_FAILED", "ModuleNotFoundError"),
    "code-unknown-tool": ("UNKNOWN_TOOL", "no tool named 'rm_rf'"),
    "code-tool-fails": ("TOOL_FAILED", "tool 'lookup' failed: KeyError"),
    "code-malformed": ("BAD_BRIDGE_MESSAGE", "not JSON"),
    "code-array": ("BAD_BRIDGE_MESSAGE", "not an object"),
    "code-noisy": ("OUTPUT_TOO_LARGE", "more than 1048576 bytes"),
    "code-huge-result": ("OUTPUT_TOO_LARGE", "a bridge message passed 1048576 bytes"),
    "code-slow": ("TIMEOUT", "timeout of 1s"),
    "code-exits": ("EXITED", "exited with 3"),
    "code-bad-result": ("BAD_RESULT", "returned int"),
    "code-not-json": ("BAD_RESULT", "not JSON"),
    "code-no-model": ("NO_MODEL", "no model"),
}


def require_bwrap() -> None:
    if not runner.bwrap_available():
        if os.environ.get("SKILLSVC_REQUIRE_SERVERS") == "1":
            pytest.fail("bubblewrap is not available (apt-get install -y bubblewrap) and SKILLSVC_REQUIRE_SERVERS=1")
        pytest.skip("bubblewrap is not available")


@pytest.fixture(scope="module")
def library(skillsvc_env) -> str:
    user = "py-code-" + uuid.uuid4().hex[:6]
    with Client(skillsvc_env.grpc_addr) as admin:
        put = lambda path, data: admin.put_library_file(path, data, user=user)  # noqa: E731
        put("code/report/SKILL.md", skill_md("report", "metadata:\n  owner: qa\n"))
        put("code/report/skill.py", REPORT_PY.lstrip().encode())
        put("code/report/helper.py", b"def title(s):\n    return '# ' + s + '\\n'\n")
        put("code/async-report/SKILL.md", skill_md("async-report"))
        put(
            "code/async-report/skill.py",
            b"class S:\n    async def execute(self, ctx):\n"
            b"        v = await ctx.tools.acall('lookup', key='a')\n"
            b"        return {'output': {'v': v, 'm': await ctx.llm.acomplete([{'role': 'user', 'content': 'x'}])}}\n",
        )
        put("code/lingers/SKILL.md", skill_md("lingers", 'metadata:\n  timeout: "10"\n'))
        put("code/lingers/skill.py", LINGERS_PY.lstrip().encode())
        put("prompts/plain/SKILL.md", b"---\nname: plain\ndescription: A prompt skill.\n---\nJust follow me: $ARGUMENTS\n")
        for name, code in FAILING.items():
            extra = 'metadata:\n  timeout: "1"\n' if name == "code-slow" else ""
            put(f"code/{name}/SKILL.md", skill_md(name, extra))
            put(f"code/{name}/skill.py", code.encode())
        admin.drop_skill_index(user=user)
    return user


@pytest.fixture
def client(skillsvc_env, library):
    with Client(skillsvc_env.grpc_addr, user=library, thread="py-" + uuid.uuid4().hex[:12]) as c:
        yield c


class Host:
    """The caller's tools and model, recording every call the bridge makes."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, Any]] = []

    def lookup(self, args: dict[str, Any]) -> dict[str, Any]:
        self.calls.append(("lookup", args))
        return {"key": args["key"], "value": {"a": 1, "b": 2}[args["key"]]}

    def model(self, prompt: Any, **options: Any) -> str:
        self.calls.append(("model", (prompt, options)))
        return "the answer"


def make_tools(client: Client, cache: Path, sandbox: str = "none", **kw: Any) -> tuple[SkillTools, Host]:
    host = Host()
    kw.setdefault("tools", {"lookup": host.lookup})
    kw.setdefault("model", host.model)
    return SkillTools(client, sandbox=sandbox, cache_dir=cache, **kw), host


@pytest.mark.parametrize("sandbox", ["bwrap", "none"])
def test_code_skill_runs_with_opt_in(client: Client, tmp_path: Path, sandbox: str) -> None:
    if sandbox == "bwrap":
        require_bwrap()
    tools, host = make_tools(client, tmp_path / "cache", sandbox, trust_code=True)
    secret = tmp_path / "secret.txt"
    secret.write_text("host secret")
    with socket.create_server(("127.0.0.1", 0)) as listener:
        given = {"key": "b", "port": listener.getsockname()[1], "host_file": str(secret)}
        text = tools.run("use_skill", {"skill": "report", "input": given, "arguments": "the b key"})
    r = json.loads(text)
    assert list(r) == ["success", "output", "error", "metadata", "written"]
    assert r["success"] is True and r["error"] is None
    out = r["output"]
    assert out["found"] == {"key": "b", "value": 2} and out["answer"] == "the answer"
    assert out["missing"] == "UNKNOWN_TOOL" and out["arguments"] == "the b key"
    # The bridge called the caller's tool and model, once each, in order.
    assert host.calls == [("lookup", {"key": "b"}), ("model", ('Summarize: {"key": "b", "value": 2}', {"temperature": 0}))]
    meta = r["metadata"]
    assert meta["skill"] == "report" and meta["tools"] == ["lookup"] and meta["owner"] == "qa"
    assert meta["instructions"] == "Look up $ARGUMENTS and report."
    # What it wrote in its scratch workspace is in the thread's /workspace.
    assert r["written"] == ["report.txt"]
    assert client.read("/workspace/report.txt").content == "# the answer"
    if sandbox == "bwrap":
        # Confined as scripts are: no network, nothing of the host, the skill read-only.
        assert (out["network"], out["host_file"], out["wrote_skill"]) == (False, None, False)
        assert (meta["skill_dir"], meta["cwd"]) == ("/skill", "/workspace")
    else:
        assert out["network"] is True and out["host_file"] == "host secret" and meta["cwd"] != "/workspace"


def test_code_skill_not_run_without_opt_in(client: Client, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    tools, host = make_tools(client, cache)  # trust_code defaults to False
    with socket.create_server(("127.0.0.1", 0)) as listener:
        text = tools.run("use_skill", {"skill": "report", "input": {"key": "b", "port": listener.getsockname()[1]}, "arguments": "the b key"})
        listener.settimeout(0)
        with pytest.raises(BlockingIOError):
            listener.accept()  # nothing tried to connect
    instructions = client.render_skill("report", arguments="the b key").text
    assert "ARGUMENTS" not in instructions and "Look up the b key and report." in instructions
    head, last = text.rsplit("\n\n", 1)
    assert head == instructions.rstrip("\n") and "\n" not in last
    assert "skill.py was not run" in last and "trust_code=False" in last
    # It did not run: no bridge call, no file written, nothing materialized.
    assert host.calls == []
    with pytest.raises(skillsvc.NotFound):
        client.stat("/workspace/report.txt")
    assert not cache.exists()
    # use_skill is offered, but the prompt does not point code skills at it.
    assert "use_skill" in [d["name"] for d in tools.definitions()]
    assert "use_skill" not in tools.prompt()


def test_prompt_skill_through_use_skill(client: Client, tmp_path: Path) -> None:
    for trust in (False, True):
        tools, host = make_tools(client, tmp_path / "cache", trust_code=trust)
        assert tools.run("use_skill", {"skill": "plain", "arguments": "step one"}) == client.render_skill("plain", arguments="step one").text
        assert host.calls == []
    assert tools.run("use_skill", {"skill": "no-such-skill"}).startswith("Error (NOT_FOUND): ")
    assert tools.run("use_skill", {"skill": "report", "input": [1]}) == "Error (INVALID_ARGUMENT): input must be an object"


def test_async_execute(client: Client, tmp_path: Path) -> None:
    tools, host = make_tools(client, tmp_path / "cache", trust_code=True)
    r = json.loads(tools.run("use_skill", {"skill": "async-report"}))
    assert r == {"success": True, "output": {"v": {"key": "a", "value": 1}, "m": "the answer"}, "error": None, "metadata": {}, "written": []}
    assert host.calls[1] == ("model", ([{"role": "user", "content": "x"}], {}))


@pytest.mark.parametrize("sandbox", ["bwrap", "none"])
def test_result_stands_when_the_skill_leaves_work_running(client: Client, tmp_path: Path, sandbox: str) -> None:
    if sandbox == "bwrap":
        require_bwrap()
    tools, _ = make_tools(client, tmp_path / "cache", sandbox, trust_code=True)
    token = uuid.uuid4().hex
    r = json.loads(tools.run("use_skill", {"skill": "lingers", "input": {"token": token}}))
    assert (r["success"], r["output"], r["error"]) == (True, "done", None)
    assert live_processes(token) == []


@pytest.mark.parametrize("name", sorted(FAILURES))
def test_failing_code_skills(client: Client, tmp_path: Path, name: str) -> None:
    kw: dict[str, Any] = {"model": None} if name == "code-no-model" else {}
    tools, _ = make_tools(client, tmp_path / "cache", trust_code=True, **kw)
    r = json.loads(tools.run("use_skill", {"skill": name, "input": {}}))
    kind, phrase = FAILURES[name]
    assert r["success"] is False and r["output"] is None
    assert r["error"].startswith(kind + ": ") and phrase in r["error"], r
    if kind == "EXCEPTION":
        assert "ValueError" in r["metadata"]["traceback"]
    if name == "code-noisy":
        assert len(r["metadata"]["stdout"]) == codeskills.TAIL_BYTES


def test_failing_code_skill_under_bwrap(client: Client, tmp_path: Path) -> None:
    require_bwrap()
    tools, _ = make_tools(client, tmp_path / "cache", "bwrap", trust_code=True)
    for name in ("code-raises", "code-slow"):
        r = json.loads(tools.run("use_skill", {"skill": name}))
        assert r["error"].startswith(FAILURES[name][0] + ": ")


def test_options_and_definitions(client: Client, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    tools, _ = make_tools(client, tmp_path / "cache", trust_code=True)
    for style in ("anthropic", "openai", "openai-responses", "gemini"):
        names = [d.get("name") or d["function"]["name"] for d in tools.definitions(style)]  # type: ignore[arg-type]
        assert names == ["load_skill", "read_skill_file", "run_skill_script", "use_skill"]
    assert "use_skill" in tools.prompt()
    off, _ = make_tools(client, tmp_path / "cache", trust_code=True, use_skill=False)
    assert "use_skill" not in [d["name"] for d in off.definitions()] and not off.handles("use_skill")
    with pytest.raises(ValueError):
        off.run("use_skill", {"skill": "report"})
    # A timeout of the caller's own wins over the skill's.
    short, _ = make_tools(client, tmp_path / "cache", trust_code=True, code_timeout=0.5)
    assert json.loads(short.run("use_skill", {"skill": "code-slow"}))["error"].startswith("TIMEOUT: the code skill ran past its timeout of 0.5s")
    # The runner's errors before a run are the tool's error texts, as for scripts.
    monkeypatch.setattr(runner, "_probe", False)
    boxed, _ = make_tools(client, tmp_path / "cache", "bwrap", trust_code=True)
    assert boxed.run("use_skill", {"skill": "report"}).startswith("Error (SANDBOX_UNAVAILABLE): ")
    # Code skills need a local sandbox for their bridge.
    with pytest.raises(skillsvc.InvalidArgument):
        codeskills.run_code_skill(client, "report", sandbox=_Remote(), cache_dir=tmp_path / "cache")
    with pytest.raises(skillsvc.FailedPrecondition, match="not a code skill"):
        codeskills.run_code_skill(client, "plain", sandbox="none", cache_dir=tmp_path / "cache")


class _Remote:
    name = "remote"

    def paths(self, skill_dir: str, workspace_dir: str) -> tuple[str, str]:
        return skill_dir, workspace_dir

    def run(self, spec: runner.CommandSpec) -> runner.CommandResult:
        raise AssertionError("not reached")
