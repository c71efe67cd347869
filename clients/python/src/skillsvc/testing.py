"""A pytest plugin that starts a disposable skillsvc on a real MinIO.

It runs the project's cmd/testenv ($SKILLSVC_TESTENV, else `go run
./cmd/testenv` from $SKILLSVC_REPO or the checkout this file lives in),
which uploads the example skill library for user alice and prints where
everything listens. Load it with ``-p skillsvc.testing``; the fixture is
``skillsvc_env``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest


@dataclass(frozen=True)
class TestEnv:
    """What testenv printed: the service, and the bucket behind it."""

    __test__ = False  # not a test class

    grpc_addr: str
    http_addr: str
    user: str
    s3_endpoint: str
    bucket: str
    access_key: str
    secret_key: str
    region: str
    # With testenv's --tls or --mtls: PEM files of its CA and of a client
    # certificate that CA issued.
    ca_file: str = ""
    client_cert_file: str = ""
    client_key_file: str = ""


def _command() -> tuple[list[str], str | None]:
    if bin_ := os.environ.get("SKILLSVC_TESTENV"):
        return [bin_], None
    repo = os.environ.get("SKILLSVC_REPO") or str(Path(__file__).resolve().parents[4])
    return ["go", "run", "./cmd/testenv"], repo


def start(*skillsvc_flags: str, testenv_flags: tuple[str, ...] = (), timeout: float = 180) -> tuple[TestEnv, subprocess.Popen[str]]:
    """Starts testenv (with ``testenv_flags``, such as ``("--mtls",)``) and
    skillsvc (with ``skillsvc_flags``); closing the process's stdin stops it."""
    cmd, cwd = _command()
    proc = subprocess.Popen(
        [*cmd, *testenv_flags, "--", *skillsvc_flags], cwd=cwd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=sys.stderr, text=True
    )
    line: list[str] = []
    reader = threading.Thread(target=lambda: line.append(proc.stdout.readline()), daemon=True)  # type: ignore[union-attr]
    reader.start()
    reader.join(timeout)
    if not line or not line[0]:
        proc.kill()
        raise RuntimeError(f"testenv did not start within {timeout}s (exit {proc.poll()})")
    return TestEnv(**json.loads(line[0])), proc


def stop(proc: subprocess.Popen[str]) -> None:
    proc.stdin.close()  # type: ignore[union-attr]
    try:
        proc.wait(60)
    except subprocess.TimeoutExpired:
        proc.kill()


@pytest.fixture(scope="session")
def skillsvc_env() -> Iterator[TestEnv]:
    env, proc = start()
    try:
        yield env
    finally:
        stop(proc)
