"""Provenance through the client: list_skills and search_skills with
include_provenance (Client and AsyncClient), trust_line, and SkillTools'
opt-in trust line, against the real binary on MinIO with a signing key
configured. A skill published and signed with skillctl (the client leaves
signing to it) shows verified, scanned and its publisher; one published
unsigned shows unsigned; the example library, uploaded to the bucket
directly, shows out of band."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ed25519

import skillsvc
from skillsvc import AsyncClient, Client, testing
from skillsvc.tools import SkillTools
from skillsvc.v1 import library_pb2, library_pb2_grpc

REPO = Path(__file__).resolve().parents[3]


def _skillctl() -> str:
    """bin/skillctl, which `make build` writes (test-python builds it), or $SKILLCTL_BIN."""
    path = os.environ.get("SKILLCTL_BIN") or str(REPO / "bin" / "skillctl")
    if not os.access(path, os.X_OK):
        raise RuntimeError(f"no skillctl at {path}: run `make build` or set SKILLCTL_BIN")
    return path


def _md(name: str, description: str) -> bytes:
    return f"---\nname: {name}\ndescription: {description}\n---\n{description}\n".encode()


def _publish(c: Client, name: str, description: str) -> str:
    def requests():
        yield library_pb2.PublishSkillRequest(header=library_pb2.PublishSkillHeader(name=name))
        yield library_pb2.PublishSkillRequest(chunk=library_pb2.FileChunk(path="SKILL.md", data=_md(name, description)))

    stub = library_pb2_grpc.LibraryServiceStub(c._channel)
    return stub.PublishSkill(requests(), metadata=c.identity.metadata(), timeout=30).version.id


class Env:
    def __init__(self, addr: str, user: str, signed: str, unsigned: str) -> None:
        self.addr, self.user, self.signed, self.unsigned = addr, user, signed, unsigned


@pytest.fixture(scope="module")
def env(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Env]:
    keys = tmp_path_factory.mktemp("keys")
    key = ed25519.Ed25519PrivateKey.generate()
    (keys / "release.key").write_bytes(
        key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    )
    (keys / "release.pub").write_bytes(
        key.public_key().public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
    )
    e, proc = testing.start(f"--library.signing-keys=release={keys / 'release.pub'}")
    try:
        user = e.user  # whose library holds the example skills
        with Client(e.grpc_addr, user=user, thread="t1") as c:
            signed = _publish(c, "ledger-reconcile", "Reconcile a ledger export against bank statements.")
            unsigned = _publish(c, "invoice-archive", "Archive the paid invoices of a closed quarter as a PDF bundle.")
        out = subprocess.run(
            [_skillctl(), "sign", "ledger-reconcile", signed, "--key", str(keys / "release.key")],
            env={**os.environ, "SKILLCTL_TARGET": e.grpc_addr, "SKILLCTL_USER": user},
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert out.returncode == 0, out.stderr
        yield Env(e.grpc_addr, user, signed, unsigned)
    finally:
        testing.stop(proc)


# Each published skill's own search.
QUERIES = ("reconcile a ledger with bank statements", "archive paid invoices of a quarter")


def _check(env: Env, by_name: dict[str, skillsvc.Provenance]) -> None:
    signed = by_name["ledger-reconcile"]
    assert (signed.version, signed.publisher, signed.signature, signed.signature_key, signed.scan_verdict, signed.out_of_band) == (
        env.signed,
        env.user,
        "verified",
        "release",
        "clean",
        False,
    )
    unsigned = by_name["invoice-archive"]
    assert (unsigned.version, unsigned.publisher, unsigned.signature, unsigned.signature_key, unsigned.scan_verdict) == (
        env.unsigned,
        env.user,
        "unsigned",
        "",
        "clean",
    )


def test_list_and_search(env: Env) -> None:
    with Client(env.addr, user=env.user, thread="t1") as c:
        listed = c.list_skills(include_provenance=True, page_size=1000).skills
        _check(env, {s.name: s.provenance for s in listed})
        # The example library went into the bucket directly.
        csv = next(s for s in listed if s.name == "csv-summary")
        assert (csv.provenance.out_of_band, csv.provenance.signature, csv.provenance.version) == (True, "unsigned", "")
        assert all(s.HasField("provenance") for s in c.iter_skills(include_provenance=True))

        found = [r for q in QUERIES for r in c.search_skills(q, include_provenance=True).results]
        _check(env, {r.skill.name: r.skill.provenance for r in found})

        # Not asked for, not set.
        assert not any(s.HasField("provenance") for s in c.list_skills(page_size=1000).skills)
        assert not any(r.skill.HasField("provenance") for r in c.search_skills(QUERIES[0]).results)


async def test_async_list_and_search(env: Env) -> None:
    async with AsyncClient(env.addr, user=env.user, thread="t1") as c:
        listed = (await c.list_skills(include_provenance=True, page_size=1000)).skills
        _check(env, {s.name: s.provenance for s in listed})
        assert all([s.HasField("provenance") async for s in c.iter_skills(include_provenance=True)])
        found = [r for q in QUERIES for r in (await c.search_skills(q, include_provenance=True)).results]
        _check(env, {r.skill.name: r.skill.provenance for r in found})


def test_trust_line(env: Env) -> None:
    with Client(env.addr, user=env.user, thread="t1") as c:
        lines = {s.name: skillsvc.trust_line(s.provenance) for s in c.list_skills(include_provenance=True, page_size=1000).skills}
    assert lines["ledger-reconcile"] == f"Trust: signature verified by release, scan clean, published by {env.user}."
    assert lines["invoice-archive"] == f"Trust: signature unsigned, scan clean, published by {env.user}."
    assert lines["csv-summary"].startswith("Trust: signature unsigned, scan ")
    assert lines["csv-summary"].endswith(", uploaded to the library directly (no published version).")


def test_skill_tools_trust_line(env: Env) -> None:
    with Client(env.addr, user=env.user, thread="t1") as c:
        plain = SkillTools(c).run("load_skill", {"skill": "ledger-reconcile"})
        assert "Trust:" not in plain and "verified" not in SkillTools(c).prompt()
        text = SkillTools(c, provenance=True).run("load_skill", {"skill": "ledger-reconcile"})
        assert text == plain.rstrip("\n") + f"\n\nTrust: signature verified by release, scan clean, published by {env.user}."
