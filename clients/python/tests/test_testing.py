"""The pytest plugin (skillsvc.testing): a testenv that cannot start is
reported with its exit code and the reason it gave, as soon as it exits, and
testenv runs from outside the checkout when pointed at its binaries."""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import pytest

from skillsvc import Client, testing

REPO = Path(__file__).resolve().parents[3]


def test_bad_testenv_flag_says_why() -> None:
    with pytest.raises(RuntimeError) as err:
        testing.start(testenv_flags=("--no-such-flag",))
    msg = str(err.value)
    assert re.search(r"exited with code [1-9]\d* before serving", msg), msg  # 2, or go run's 1
    assert "flag provided but not defined: -no-such-flag" in msg, msg


def test_skillsvc_that_cannot_start_says_why() -> None:
    with pytest.raises(RuntimeError) as err:
        testing.start("--storage=ftp")
    msg = str(err.value)
    assert re.search(r"exited with code [1-9]\d* before serving", msg), msg
    assert 'unknown storage "ftp"' in msg, msg


def test_missing_testenv_binary_says_how(monkeypatch, tmp_path) -> None:
    monkeypatch.setenv("SKILLSVC_TESTENV", str(tmp_path / "testenv"))
    with pytest.raises(RuntimeError) as err:
        testing.start()
    assert str(tmp_path / "testenv") in str(err.value) and "SKILLSVC_TESTENV" in str(err.value)


def test_no_checkout_says_how(monkeypatch, tmp_path) -> None:
    monkeypatch.delenv("SKILLSVC_TESTENV", raising=False)
    monkeypatch.setenv("SKILLSVC_REPO", str(tmp_path))
    with pytest.raises(RuntimeError) as err:
        testing.start()
    assert "is not a skillsvc checkout" in str(err.value) and "SKILLSVC_TESTENV" in str(err.value)


def built(env: str, package: str, tmp_path: Path) -> str:
    """$env, else the binary built from package (as make does)."""
    if path := os.environ.get(env):
        return path
    out = tmp_path / Path(package).name
    subprocess.run(["go", "build", "-o", str(out), package], cwd=REPO, check=True)
    return str(out)


def test_runs_outside_the_checkout(monkeypatch, tmp_path) -> None:
    monkeypatch.setenv("SKILLSVC_TESTENV", built("SKILLSVC_TESTENV", "./cmd/testenv", tmp_path))
    monkeypatch.setenv("SKILLSVC_BIN", built("SKILLSVC_BIN", "./cmd/skillsvc", tmp_path))
    if not os.environ.get("SKILLSVC_MINIO_BIN"):
        monkeypatch.setenv("SKILLSVC_MINIO_BIN", str(REPO / ".tools" / "bin" / "minio"))
    monkeypatch.delenv("SKILLSVC_REPO", raising=False)
    monkeypatch.chdir(tmp_path)
    env, proc = testing.start()
    try:
        with Client(env.grpc_addr, user=env.user, thread="py-outside") as c:
            names = {s.name for s in c.iter_skills()}
        assert {"commit-message", "release-notes", "csv-summary"} <= names, "the built-in example library was uploaded"
    finally:
        testing.stop(proc)
