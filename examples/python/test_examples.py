"""The examples run as a user would run them, against the real service."""

from __future__ import annotations

import subprocess
import sys
import uuid
from pathlib import Path

from skillsvc import Client

HERE = Path(__file__).resolve().parent


def run(script: str, env, *args: str) -> str:
    out = subprocess.run(
        [sys.executable, str(HERE / script), "--target", env.grpc_addr, "--user", env.user, *args],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 0, out.stderr
    return out.stdout


def test_deep_agent(skillsvc_env) -> None:
    thread = "ex-" + uuid.uuid4().hex[:8]
    out = run("deep_agent.py", skillsvc_env, "--thread", thread)
    assert "following the release-notes skill" in out
    with Client(skillsvc_env.grpc_addr, user=skillsvc_env.user, thread=thread) as c:
        notes = c.read("/workspace/RELEASE_NOTES.md").content
    assert notes.startswith("## Added") and "## Fixed" in notes
    assert notes in out


def test_sdk_loop(skillsvc_env) -> None:
    out = run("sdk_loop.py", skillsvc_env)
    assert "[load_skill(commit-message)]" in out
    assert "Subject: at most 60 characters" in out, "the skill's instructions came back from the service"
    assert "ARGUMENTS: Write a commit message for: fix the login redirect loop." in out
    assert out.rstrip().endswith("after signing in.")
