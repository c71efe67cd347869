"""Bearer tokens against the real binary in jwt mode: the identity comes
from the token the client sends, fresh tokens come from a function, and
calls without a valid token are refused."""

from __future__ import annotations

import os
import secrets
import subprocess
from pathlib import Path

import pytest

from skillsvc import Client, PermissionDenied, Unauthenticated, testing
from skillsvc.deepagents import SkillsvcBackend

REPO = Path(__file__).resolve().parents[3]


def mint(secret: Path, *args: str) -> str:
    """A token from `skillsvc token`, as an operator mints one."""
    cmd = [os.environ["SKILLSVC_BIN"]] if os.environ.get("SKILLSVC_BIN") else ["go", "run", "./cmd/skillsvc"]
    out = subprocess.run([*cmd, "token", f"--secret-file={secret}", *args], cwd=REPO, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    return out.stdout.strip()


@pytest.fixture(scope="module")
def jwt_env(tmp_path_factory):
    secret = tmp_path_factory.mktemp("jwt") / "secret"
    secret.write_text(secrets.token_hex(32))
    env, proc = testing.start("--auth.mode=jwt", f"--auth.jwt.secret-file={secret}")
    try:
        yield env, secret
    finally:
        testing.stop(proc)


def test_token_is_the_identity(jwt_env) -> None:
    env, secret = jwt_env
    token = mint(secret, f"--user={env.user}", "--thread=py-jwt")
    minted = []

    def fresh() -> str:
        minted.append(1)
        return token

    # The headers claim another user and thread; the token wins.
    with Client(env.grpc_addr, user="mallory", thread="other", token=fresh) as c:
        c.write("/workspace/jwt.md", "from a token\n")
        assert {s.name for s in c.iter_skills()} == {"release-notes", "commit-message", "csv-summary"}
    assert len(minted) == 2, "the token function is called for each call"
    backend = SkillsvcBackend(env.grpc_addr, token=token)  # no thread: the token names it
    try:
        r = backend.read("/workspace/jwt.md")
        assert r.error is None and r.file_data["content"] == "from a token\n"
    finally:
        backend.close()


def test_refused_without_a_valid_token(jwt_env, tmp_path: Path) -> None:
    env, secret = jwt_env
    with Client(env.grpc_addr, user=env.user, thread="py-jwt") as c, pytest.raises(Unauthenticated):
        c.list_categories()
    other = tmp_path / "other"
    other.write_text(secrets.token_hex(32))
    forged = mint(other, f"--user={env.user}", "--thread=py-jwt")
    with Client(env.grpc_addr, token=forged) as c, pytest.raises(Unauthenticated):
        c.list_categories()


def test_admin_token(jwt_env) -> None:
    env, secret = jwt_env
    agent = mint(secret, f"--user={env.user}", "--thread=py-jwt")
    with Client(env.grpc_addr, token=agent) as c, pytest.raises(PermissionDenied):
        c.drop_skill_index(user=env.user)
    with Client(env.grpc_addr, token=mint(secret, "--admin", "--subject=ops")) as admin:
        admin.drop_skill_index(user=env.user)
