"""The runners' shared conformance fixture (test/runner in the repository):
its skill uploaded for a user of its own, every case of cases.json run through
Client.run_skill_script and held to the same expectations as the Go and
TypeScript runners. Without bubblewrap the bwrap cases fail when
SKILLSVC_REQUIRE_SERVERS=1 (as make test sets), else they are skipped."""

from __future__ import annotations

import json
import os
import random
import re
import socket
import uuid
from pathlib import Path
from typing import Any

import pytest

import skillsvc
from skillsvc import Client, runner
from skillsvc.testing import live_processes

FIXTURE = Path(__file__).resolve().parents[3] / "test" / "runner"
DOC = json.loads((FIXTURE / "cases.json").read_text())
SKILL = DOC["skill"]

# Each error of this runner by its name in cases.json; subclasses first.
ERRORS: list[tuple[str, type[Exception]]] = [
    ("ScriptNotFound", skillsvc.ScriptNotFound),
    ("ScriptOutsideSkill", skillsvc.ScriptOutsideSkill),
    ("UnknownInterpreter", skillsvc.UnknownInterpreter),
    ("BadOutput", skillsvc.BadOutput),
    ("Timeout", skillsvc.ScriptTimeout),
    ("OutputTooLarge", skillsvc.OutputTooLarge),
    ("WorkspaceTooLarge", skillsvc.WorkspaceTooLarge),
    ("SandboxUnavailable", skillsvc.SandboxUnavailable),
    ("NotFound", skillsvc.NotFound),
]

CASES = [
    pytest.param(case, sandbox, id=f"{i:02d} {case['name']}/{sandbox}")
    for i, case in enumerate(DOC["cases"])
    for sandbox in case.get("sandboxes", ["none"])
]


@pytest.fixture(scope="module")
def library(skillsvc_env) -> str:
    user = "py-conformance-" + uuid.uuid4().hex[:6]
    root = FIXTURE / SKILL
    with Client(skillsvc_env.grpc_addr) as admin:
        for p in sorted(root.rglob("*")):
            if p.is_file():
                mode = 0o755 if os.stat(p).st_mode & 0o111 else 0o644
                admin.put_library_file(f"tools/{SKILL}/{p.relative_to(root).as_posix()}", p.read_bytes(), user=user, mode=mode)
        admin.drop_skill_index(user=user)
    return user


def fill(value: Any, placeholders: dict[str, str]) -> Any:
    if isinstance(value, str):
        for k, v in placeholders.items():
            value = value.replace("{{" + k + "}}", v)
        return value
    if isinstance(value, list):
        return [fill(v, placeholders) for v in value]
    if isinstance(value, dict):
        return {k: fill(v, placeholders) for k, v in value.items()}
    return value


def check(expect: dict[str, Any], got: dict[str, Any], client: Client, marker: str) -> None:
    assert got["error"] == expect.get("error", ""), got
    if "exit_code" in expect:
        assert got["exit_code"] == expect["exit_code"], got
    if "output" in expect:
        assert got["output"] == expect["output"], got
    for k, v in expect.get("output_subset", {}).items():
        assert (got["output"] or {}).get(k) == v, (k, got["output"])
    for stream in ("stdout", "stderr"):
        if stream in expect:
            assert got[stream] == expect[stream], got
        if stream + "_re" in expect:
            assert re.search(expect[stream + "_re"], got[stream]), got
        if stream + "_len" in expect:
            assert len(got[stream].encode()) == expect[stream + "_len"], got
    if "written" in expect:
        assert got["written"] == expect["written"], got
    for rel, want in expect.get("workspace_after", {}).items():
        try:
            have: str | None = client.download("/workspace/" + rel).decode()
        except skillsvc.NotFound:
            have = None
        assert have == want, rel
    if expect.get("children_dead"):
        assert live_processes(marker) == [], "a process of the script outlived the run"


@pytest.mark.parametrize("case,sandbox", CASES)
def test_conformance(skillsvc_env, library: str, tmp_path: Path, monkeypatch, case: dict[str, Any], sandbox: str) -> None:
    if case.get("no_bwrap"):
        monkeypatch.setattr(runner, "_probe", False)
    elif sandbox == "bwrap" and not runner.bwrap_available():
        if os.environ.get("SKILLSVC_REQUIRE_SERVERS") == "1":
            pytest.fail("bubblewrap is not available (apt-get install -y bubblewrap) and SKILLSVC_REQUIRE_SERVERS=1")
        pytest.skip("bubblewrap is not available")
    if "path_prepend" in case:
        monkeypatch.setenv("PATH", f"{FIXTURE / case['path_prepend']}{os.pathsep}{os.environ.get('PATH', '')}")
    with socket.create_server(("127.0.0.1", 0)) as listener:
        marker = f"{random.randrange(10**9):09d}"
        case = fill(case, {"marker": marker, "port": str(listener.getsockname()[1])})
        with Client(skillsvc_env.grpc_addr, user=library, thread="py-conf-" + uuid.uuid4().hex[:12]) as client:
            for rel, body in case.get("workspace_before", {}).items():
                client.upload("/workspace/" + rel, body.encode())
            options: dict[str, Any] = {"sandbox": sandbox, "cache_dir": tmp_path / "cache"}
            if "json_args" in case:
                options["json_args"] = case["json_args"]
            else:
                options["args"] = case.get("args", [])
            for key in ("timeout", "max_output_bytes", "memory_bytes", "network", "workspace", "interpreters"):
                if key in case:
                    options[key] = case[key]
            got: dict[str, Any] = {"error": "", "exit_code": None, "stdout": "", "stderr": "", "output": None, "written": []}
            try:
                r = client.run_skill_script(case.get("skill", SKILL), case["script"], **options)
                got.update(exit_code=r.exit_code, stdout=r.stdout, stderr=r.stderr, output=r.output, written=r.written)
            except skillsvc.SkillsvcError as e:
                got["error"] = next((name for name, cls in ERRORS if isinstance(e, cls)), f"untyped: {e!r}")
                if isinstance(e, runner.ScriptError):
                    got.update(exit_code=e.exit_code, stdout=e.stdout, stderr=e.stderr)
            check(case["expect"], got, client, marker)
            if sandbox in case.get("by_sandbox", {}):
                check(case["by_sandbox"][sandbox], got, client, marker)


def test_error_codes() -> None:
    # Each kind's gRPC code is the one cases.json gives every runner.
    classes = dict(ERRORS)
    classes["VerifyFailed"] = skillsvc.runner.ManifestMismatch
    codes = {k: v for k, v in DOC["codes"].items() if k != "$comment"}
    for name, want in codes.items():
        assert name in classes, f"cases.json codes: {name} is no error of this runner"
        assert classes[name].code.name == want, f"{name}: {classes[name].code.name}, cases.json says {want}"
    assert {n for n, _ in ERRORS if n != "NotFound"} <= codes.keys()
