"""TLS against the real binary serving mutual TLS (testenv --mtls): the
client's certificate options connect, and a client without its certificate,
or without TLS, is refused."""

from __future__ import annotations

from pathlib import Path

import grpc
import pytest

from skillsvc import AsyncClient, Client, Unavailable, testing


@pytest.fixture(scope="module")
def mtls_env():
    env, proc = testing.start(testenv_flags=("--mtls",))
    try:
        yield env
    finally:
        testing.stop(proc)


def files(env) -> dict[str, bytes]:
    return {
        "root_certificates": Path(env.ca_file).read_bytes(),
        "private_key": Path(env.client_key_file).read_bytes(),
        "certificate_chain": Path(env.client_cert_file).read_bytes(),
    }


def test_mutual_tls(mtls_env) -> None:
    with Client(mtls_env.grpc_addr, user=mtls_env.user, thread="py-tls", **files(mtls_env)) as c:
        assert {x.name for x in c.list_categories().categories} == {"data", "writing"}
    creds = grpc.ssl_channel_credentials(**files(mtls_env))
    with Client(mtls_env.grpc_addr, user=mtls_env.user, thread="py-tls", tls=creds) as c:
        assert c.get_skill("release-notes").skill.name == "release-notes"


async def test_mutual_tls_async(mtls_env) -> None:
    async with AsyncClient(mtls_env.grpc_addr, user=mtls_env.user, thread="py-tls", **files(mtls_env)) as c:
        assert (await c.get_skill("csv-summary")).skill.name == "csv-summary"


def test_refused_without_the_client_certificate(mtls_env) -> None:
    ca = Path(mtls_env.ca_file).read_bytes()
    with Client(mtls_env.grpc_addr, user=mtls_env.user, thread="py-tls", root_certificates=ca, timeout=5) as c:
        with pytest.raises(Unavailable):
            c.list_categories()
    with Client(mtls_env.grpc_addr, user=mtls_env.user, thread="py-tls", timeout=5) as c:  # plaintext
        with pytest.raises(Unavailable):
            c.list_categories()
