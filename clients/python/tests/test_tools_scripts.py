"""SkillTools' run_skill_script against the real binary on MinIO: a skill's
scripts run through the tool in JSON and plain mode, the files they write
read back through the client, and each runner error as the tool's text
(contract 1 of the clients: the same text as the TypeScript client's)."""

from __future__ import annotations

import json
import os
import uuid
from pathlib import Path
from typing import Any

import pytest
from google.genai import types as genai_types

from skillsvc import Client, runner
from skillsvc import tools as skill_tools
from skillsvc.tools import SkillTools

SKILL_MD = b"---\nname: tool-scripts\ndescription: Scripts for the tool tests.\n---\nRun scripts/make.py.\n"

SCRIPTS = {
    # JSON mode: writes out.json in its working directory (the workspace copy).
    "scripts/make.py": """
import json, os, sys
args = json.loads(sys.argv[1])
with open("out.json", "w") as f:
    json.dump({"total": sum(args["numbers"])}, f)
print(json.dumps({"total": sum(args["numbers"]), "timeout": os.environ["SKILL_TIMEOUT"], "note": "Zoë"}))
""",
    # Plain mode: reads a workspace file, writes another.
    "scripts/upper.py": """
import sys
src, dst = sys.argv[1], sys.argv[2]
text = open(src).read()
open(dst, "w").write(text.upper())
print("read", len(text), "bytes")
print("wrote", dst, file=sys.stderr)
sys.exit(2)
""",
    "scripts/bad.py": "import sys\nprint('not json ')\nprint('oops', file=sys.stderr)\n",
    "scripts/long.py": "print('q' * 10000)\n",
    "scripts/sleep.py": "import time\ntime.sleep(30)\n",
    "scripts/noisy.py": "import sys\nsys.stdout.write('x' * (2 << 20))\n",
    "scripts/big.py": "open('big.bin', 'wb').write(b'x' * 2000)\n",
    "scripts/notes.txt": "not a script\n",
    "scripts/bytes.sh": "printf 'a\\377b'\n",
}


def require_bwrap() -> None:
    if not runner.bwrap_available():
        if os.environ.get("SKILLSVC_REQUIRE_SERVERS") == "1":
            pytest.fail("bubblewrap is not available (apt-get install -y bubblewrap) and SKILLSVC_REQUIRE_SERVERS=1")
        pytest.skip("bubblewrap is not available")


@pytest.fixture(scope="module")
def library(skillsvc_env) -> str:
    user = "py-tool-scripts-" + uuid.uuid4().hex[:6]
    with Client(skillsvc_env.grpc_addr) as admin:
        admin.put_library_file("tools/tool-scripts/SKILL.md", SKILL_MD, user=user)
        for path, text in SCRIPTS.items():
            admin.put_library_file(f"tools/tool-scripts/{path}", text.lstrip("\n").encode(), user=user)
        admin.drop_skill_index(user=user)
    return user


@pytest.fixture
def client(skillsvc_env, library):
    with Client(skillsvc_env.grpc_addr, user=library, thread="py-" + uuid.uuid4().hex[:12]) as c:
        yield c


def tools_for(client: Client, tmp_path: Path, sandbox: str = "none", **kw: Any) -> SkillTools:
    if sandbox == "bwrap":
        require_bwrap()
    return SkillTools(client, sandbox=sandbox, cache_dir=tmp_path / "cache", **kw)


def call(tools: SkillTools, script: str, **args: Any) -> str:
    return tools.run("run_skill_script", {"skill": "tool-scripts", "script": script, **args})


@pytest.mark.parametrize("sandbox", ["bwrap", "none"])
def test_json_mode(client: Client, tmp_path: Path, sandbox: str) -> None:
    tools = tools_for(client, tmp_path, sandbox)
    text = call(tools, "make.py", json_args={"numbers": [1, 2, 3.5]})
    assert text == '{"exit_code":0,"output":{"total":6.5,"timeout":"60","note":"Zoë"},"written":["out.json"]}'
    # The file the script wrote is in the thread's /workspace.
    assert json.loads(client.read("/workspace/out.json").content) == {"total": 6.5}
    # timeout_seconds reaches the script; arguments may come as OpenAI's JSON string.
    text = tools.run("run_skill_script", json.dumps({"skill": "tool-scripts", "script": "scripts/make.py", "json_args": {"numbers": []}, "timeout_seconds": 30}))
    assert json.loads(text)["output"]["timeout"] == "30"


@pytest.mark.parametrize("sandbox", ["bwrap", "none"])
def test_plain_mode(client: Client, tmp_path: Path, sandbox: str) -> None:
    client.write("/workspace/docs/in.txt", "hello")
    tools = tools_for(client, tmp_path, sandbox)
    text = call(tools, "upper.py", args=["docs/in.txt", "docs/out.txt"])
    assert text == '{"exit_code":2,"stdout":"read 5 bytes\\n","stderr":"wrote docs/out.txt\\n","written":["docs/out.txt"]}'
    assert client.read("/workspace/docs/out.txt").content == "HELLO"
    # Invalid UTF-8 is replaced; no arguments at all is plain mode.
    assert json.loads(call(tools, "bytes.sh")) == {"exit_code": 0, "stdout": "a\ufffdb", "stderr": "", "written": []}


def test_errors(client: Client, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    tools = tools_for(client, tmp_path)
    cases = {
        "SCRIPT_NOT_FOUND": {"script": "missing.py"},
        "SCRIPT_OUTSIDE_SKILL": {"script": "../x.py"},
        "UNKNOWN_INTERPRETER": {"script": "notes.txt"},
        "BAD_OUTPUT": {"script": "bad.py", "json_args": {}},
        "TIMEOUT": {"script": "sleep.py", "timeout_seconds": 1},
        "OUTPUT_TOO_LARGE": {"script": "noisy.py"},
        "NOT_FOUND": {"skill": "no-such-skill", "script": "x.py"},
    }
    for kind, args in cases.items():
        text = tools.run("run_skill_script", {"skill": "tool-scripts", **args})
        assert text.startswith(f"Error ({kind}): "), (kind, text)
    bad = call(tools, "bad.py", json_args={})
    assert bad.endswith("did not print exactly one JSON object on stdout\nstdout: not json \nstderr: oops\n")
    # The output a BadOutput carries is cut to 4 KiB.
    long = call(tools, "long.py", json_args={})
    head, _, output = long.partition("\n")
    assert head.startswith("Error (BAD_OUTPUT): ") and len(output.encode()) == skill_tools.BAD_OUTPUT_BYTES
    assert output.startswith("stdout: qqq")
    for args, why in [
        ({"args": ["a"], "json_args": {}}, "pass args or json_args, not both"),
        ({"args": "a b"}, "args must be a list of strings"),
        ({"timeout_seconds": -1}, "timeout_seconds must be a whole number from 0 to 3600"),
        ({"timeout_seconds": 3601}, "timeout_seconds must be a whole number from 0 to 3600"),
    ]:
        assert call(tools, "make.py", **args) == f"Error (INVALID_ARGUMENT): {why}"
    assert tools.run("run_skill_script", {"skill": "tool-scripts"}) == "Error (INVALID_ARGUMENT): missing argument 'script'"
    monkeypatch.setattr(runner, "MAX_WORKSPACE_BYTES", 1000)
    assert call(tools, "big.py").startswith("Error (WORKSPACE_TOO_LARGE): ")
    monkeypatch.setattr(runner, "_probe", False)
    unavailable = SkillTools(client, sandbox="bwrap", cache_dir=tmp_path / "cache")
    assert call(unavailable, "make.py", json_args={}).startswith("Error (SANDBOX_UNAVAILABLE): sandbox 'bwrap' asked for")


def test_offered_in_every_style(client: Client, tmp_path: Path) -> None:
    tools = tools_for(client, tmp_path)
    shared = next(t for t in skill_tools.DEFINITIONS if t["name"] == "run_skill_script")
    assert shared["runsIn"] == "client"
    anthropic = {t["name"]: t for t in tools.definitions("anthropic")}
    assert anthropic["run_skill_script"] == {"name": "run_skill_script", "description": shared["description"], "input_schema": shared["inputSchema"]}
    openai = {t["function"]["name"]: t for t in tools.definitions("openai")}
    assert openai["run_skill_script"]["function"]["parameters"] == shared["inputSchema"]
    responses = {t["name"]: t for t in tools.definitions("openai-responses")}
    assert responses["run_skill_script"]["type"] == "function"
    gemini = {t["name"]: t for t in tools.definitions("gemini")}
    declared = genai_types.FunctionDeclaration.model_validate(gemini["run_skill_script"])
    assert declared.parameters_json_schema == shared["inputSchema"]
    assert tools.handles("run_skill_script") and "run_skill_script" in tools.prompt()
    # scripts=False: not offered, not mentioned, not run.
    off = tools_for(client, tmp_path, scripts=False)
    assert "run_skill_script" not in [t["name"] for t in off.definitions()] and not off.handles("run_skill_script")
    assert "run_skill_script" not in off.prompt()
    with pytest.raises(ValueError):
        call(off, "make.py", json_args={})
