"""A pytest plugin that starts a disposable skillsvc on a real MinIO.

It runs the project's cmd/testenv, which uploads the example skill library
for user alice and prints where everything listens: ``$SKILLSVC_TESTENV``
(a testenv binary: ``go build -o testenv ./cmd/testenv`` in a skillsvc
checkout), else ``go run ./cmd/testenv`` in ``$SKILLSVC_REPO`` or the
checkout this file lives in. Outside a checkout testenv needs
``$SKILLSVC_BIN`` (a skillsvc binary) and MinIO (``$SKILLSVC_MINIO_BIN`` or
``minio`` on the PATH). Load it with ``-p skillsvc.testing``; the fixture is
``skillsvc_env``. When testenv fails, the error gives its exit code and the
last lines it wrote, as soon as it exits.
"""

from __future__ import annotations

import collections
import json
import os
import queue
import subprocess
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO

import pytest

#: How to point the plugin at testenv, for the errors that need it.
HOW = (
    "set SKILLSVC_TESTENV to a testenv binary (`go build -o testenv ./cmd/testenv` in a skillsvc checkout; "
    "it also needs SKILLSVC_BIN, a skillsvc binary from `go build -o skillsvc ./cmd/skillsvc`, and MinIO as "
    "SKILLSVC_MINIO_BIN or minio on the PATH), or SKILLSVC_REPO to a skillsvc checkout"
)

# testenv's last stderr lines kept for an error.
_TAIL_LINES = 40


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
    repo = os.environ.get("SKILLSVC_REPO")
    if not repo:
        here = Path(__file__).resolve().parents
        # clients/python/src/skillsvc/testing.py in a checkout.
        repo = str(here[4]) if len(here) > 4 else ""
        if not (Path(repo) / "cmd" / "testenv").is_dir():
            raise RuntimeError(f"skillsvc.testing runs outside a skillsvc checkout ({__file__}): {HOW}")
    elif not (Path(repo) / "cmd" / "testenv").is_dir():
        raise RuntimeError(f"SKILLSVC_REPO={repo} is not a skillsvc checkout (no cmd/testenv): {HOW}")
    return ["go", "run", "./cmd/testenv"], repo


def _forward(stream: IO[str], tail: collections.deque[str]) -> None:
    """Passes testenv's stderr (skillsvc's log) on to ours, keeping its last lines."""
    for line in stream:
        tail.append(line.rstrip("\n"))
        try:
            os.write(2, line.encode())
        except OSError:
            pass


def start(*skillsvc_flags: str, testenv_flags: tuple[str, ...] = (), timeout: float = 180) -> tuple[TestEnv, subprocess.Popen[str]]:
    """Starts testenv (with ``testenv_flags``, such as ``("--mtls",)``) and
    skillsvc (with ``skillsvc_flags``); closing the process's stdin stops it.
    Raises RuntimeError with testenv's exit code and last lines when it exits
    before serving, at once."""
    cmd, cwd = _command()
    try:
        proc = subprocess.Popen(
            [*cmd, *testenv_flags, "--", *skillsvc_flags],
            cwd=cwd,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            errors="replace",
        )
    except OSError as err:
        raise RuntimeError(f"cannot run testenv ({cmd[0]}): {err}; {HOW}") from err
    tail: collections.deque[str] = collections.deque(maxlen=_TAIL_LINES)
    # Drains stderr for the process's life, so skillsvc never blocks on it.
    forward = threading.Thread(target=_forward, args=(proc.stderr, tail), daemon=True)
    forward.start()
    lines: queue.Queue[str] = queue.Queue()
    threading.Thread(target=lambda: lines.put(proc.stdout.readline()), daemon=True).start()  # type: ignore[union-attr]

    def end() -> int:
        """Ends testenv: EOF on stdin is its signal to stop its servers (also
        when it runs under go run, which a kill would not reach)."""
        try:
            proc.stdin.close()  # type: ignore[union-attr]
        except OSError:
            pass
        try:
            return proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            return proc.wait()

    def failed(why: str) -> RuntimeError:
        forward.join(5)  # the last lines, once the pipe closes
        last = "\n".join(tail) or "(nothing)"
        return RuntimeError(f"{why}; testenv ({' '.join(cmd)}) wrote last:\n{last}")

    deadline = time.monotonic() + timeout
    while True:
        try:
            line = lines.get(timeout=0.1)
        except queue.Empty:
            line = None
        if line:
            try:
                return TestEnv(**json.loads(line)), proc
            except (ValueError, TypeError) as err:
                end()
                raise failed(f"testenv printed {line.strip()!r}, not its JSON line ({err})") from err
        if line == "" or proc.poll() is not None:  # stdout closed, or the process ended
            raise failed(f"testenv exited with code {end()} before serving")
        if time.monotonic() > deadline:
            end()
            raise failed(f"testenv did not start within {timeout}s")


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


def live_processes(token: str) -> list[str]:
    """The pids of live (not zombie) processes whose command line holds
    token: what a killed run must not leave behind."""
    alive = []
    for pid in os.listdir("/proc"):
        try:
            cmdline = Path("/proc", pid, "cmdline").read_bytes()
            state = Path("/proc", pid, "stat").read_text().rsplit(")", 1)[1].split()[0]
        except (OSError, IndexError):
            continue
        if token.encode() in cmdline and state != "Z":
            alive.append(pid)
    return alive
