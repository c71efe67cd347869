"""What the client does when the service fails: read-only calls are retried
on UNAVAILABLE and writes are not, timeouts end calls, and a per-user limit's
retry delay reaches the caller.

Retries and timeouts are driven by an in-process FilesystemService that
fails on cue (the behaviour under test is the client's); the retry delay
comes from the real binary with a tight per-user limit."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from concurrent import futures

import grpc
import pytest

from skillsvc import AsyncClient, Client, DeadlineExceeded, ResourceExhausted, Unavailable
from skillsvc import testing
from skillsvc.v1 import filesystem_pb2, filesystem_pb2_grpc


class Flaky(filesystem_pb2_grpc.FilesystemServiceServicer):
    """Stat fails UNAVAILABLE ``failures`` times, then answers; Write is
    always UNAVAILABLE; Read answers only once the caller gives up."""

    def __init__(self, failures: int) -> None:
        self.failures = failures
        self.calls: dict[str, int] = {}
        self.lock = threading.Lock()

    def _count(self, name: str) -> int:
        with self.lock:
            self.calls[name] = self.calls.get(name, 0) + 1
            return self.calls[name]

    def Stat(self, request, context):
        if self._count("Stat") <= self.failures:
            context.abort(grpc.StatusCode.UNAVAILABLE, "storage is not answering")
        return filesystem_pb2.StatResponse(info=filesystem_pb2.FileInfo(path=request.path, size=7))

    def Write(self, request, context):
        self._count("Write")
        context.abort(grpc.StatusCode.UNAVAILABLE, "storage is not answering")

    def Read(self, request, context):
        self._count("Read")
        done = threading.Event()
        context.add_callback(done.set)
        done.wait(30)
        context.abort(grpc.StatusCode.INTERNAL, "the client did not give up")


def serve(servicer: Flaky) -> Iterator[str]:
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=4))
    filesystem_pb2_grpc.add_FilesystemServiceServicer_to_server(servicer, server)
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    try:
        yield f"127.0.0.1:{port}"
    finally:
        server.stop(None)


@pytest.fixture
def flaky() -> Iterator[tuple[Flaky, str]]:
    f = Flaky(failures=2)
    for addr in serve(f):
        yield f, addr


def test_reads_are_retried_on_unavailable(flaky) -> None:
    f, addr = flaky
    with Client(addr, user="u", thread="t") as c:
        assert c.stat("/workspace/a.md").info.size == 7
    assert f.calls["Stat"] == 3


def test_reads_give_up_after_four_attempts() -> None:
    f = Flaky(failures=10)
    for addr in serve(f):
        with Client(addr, user="u", thread="t") as c, pytest.raises(Unavailable):
            c.stat("/workspace/a.md")
    assert f.calls["Stat"] == 4


def test_writes_are_not_retried(flaky) -> None:
    f, addr = flaky
    with Client(addr, user="u", thread="t") as c, pytest.raises(Unavailable) as err:
        c.write("/workspace/a.md", "x")
    assert err.value.code == grpc.StatusCode.UNAVAILABLE
    assert f.calls["Write"] == 1


def test_timeouts(flaky) -> None:
    f, addr = flaky
    # The deadline covers the retries too, so a client that retries keeps a
    # timeout well above the backoff (0.1 s, 0.2 s, 0.4 s).
    with Client(addr, user="u", thread="t", timeout=0.2) as c:
        with pytest.raises(DeadlineExceeded):
            c.read("/workspace/a.md")  # the client's default
        with pytest.raises(DeadlineExceeded):
            c.with_identity(thread="t2").read("/workspace/a.md", timeout=0.1)  # per call
    assert f.calls["Read"] == 2


async def test_async_retries_and_timeouts(flaky) -> None:
    f, addr = flaky
    async with AsyncClient(addr, user="u", thread="t") as c:
        assert (await c.stat("/workspace/a.md")).info.size == 7
        with pytest.raises(Unavailable):
            await c.write("/workspace/a.md", "x")
        with pytest.raises(DeadlineExceeded):
            await c.read("/workspace/a.md", timeout=0.2)
    assert (f.calls["Stat"], f.calls["Write"]) == (3, 1)


def test_limit_carries_retry_delay() -> None:
    env, proc = testing.start("--limits.rate=0.01", "--limits.burst=1")
    try:
        with Client(env.grpc_addr, user=env.user, thread="py-limits") as c:
            # The burst is one unit: ten calls from memory at a tenth each,
            # fewer when the first indexes the library in storage.
            with pytest.raises(ResourceExhausted) as err:
                for _ in range(11):
                    c.list_categories()
        assert err.value.code == grpc.StatusCode.RESOURCE_EXHAUSTED
        # A tenth of a unit short, up to a burst in debt: 10 to 110 s at 0.01 a second.
        assert err.value.retry_after is not None and 1 <= err.value.retry_after <= 111
    finally:
        testing.stop(proc)
