"""SkillsvcBackend: skillsvc as the filesystem of a LangChain Deep Agent.

    from deepagents import create_deep_agent
    from skillsvc import Client
    from skillsvc.deepagents import SkillsvcBackend, skill_sources

    backend = SkillsvcBackend("127.0.0.1:7070", user="alice")
    agent = create_deep_agent(model=..., backend=backend, skills=skill_sources(backend))
    agent.invoke({"messages": [...]}, {"configurable": {"thread_id": "t1"}})

The agent's file tools work on /workspace (the thread's scratch space),
/ticket and the read-only /skills library, and the skills middleware reads
skills from the service. It implements deepagents' BackendProtocol (0.7):
every method, the async ones natively on grpc.aio, with the protocol's
result types and error literals. Without a fixed thread, each call takes the
thread from the LangGraph run's config (configurable.thread_id), so one
backend serves every thread of a graph, each as its own identity.
"""

from __future__ import annotations

import base64
from datetime import timezone
from typing import Any

import grpc
from deepagents.backends.protocol import (
    FILE_NOT_FOUND,
    INVALID_PATH,
    IS_DIRECTORY,
    PERMISSION_DENIED,
    BackendProtocol,
    DeleteResult,
    EditResult,
    FileDownloadResponse,
    FileInfo,
    FileUploadResponse,
    GlobResult,
    GrepMatch,
    GrepResult,
    LsResult,
    ReadResult,
    WriteResult,
)

from .client import DEFAULT_TARGET, AsyncClient, Client
from .errors import SkillsvcError
from .v1 import filesystem_pb2

__all__ = ["SkillsvcBackend", "skill_sources"]

# Binary files are returned whole, base64-encoded, up to this size.
MAX_BINARY_READ = 10 << 20


class SkillsvcBackend(BackendProtocol):
    """A deepagents backend over skillsvc, for one user.

    Pass ``thread`` to pin one thread; leave it out to take the thread from
    each LangGraph run's ``configurable.thread_id``. In jwt mode pass
    ``token``: the token names user and thread, so one backend per thread.
    Other keyword arguments (ticket, tls, timeout, ...) go to the clients.
    """

    def __init__(self, target: str = DEFAULT_TARGET, *, user: str | None = None, thread: str | None = None, **client_kwargs: Any) -> None:
        self._target = target
        self._thread = thread
        self._kwargs = {"user": user, **client_kwargs}
        self._client = Client(target, thread=thread, **self._kwargs)
        self._aclient: AsyncClient | None = None

    def close(self) -> None:
        self._client.close()

    async def aclose(self) -> None:
        self._client.close()
        if self._aclient is not None:
            await self._aclient.close()

    def _current_thread(self) -> str | None:
        # A bearer token names its own thread (jwt mode ignores the header).
        if self._thread or self._kwargs.get("token") is not None:
            return self._thread
        try:
            from langgraph.config import get_config

            thread = get_config().get("configurable", {}).get("thread_id")
        except RuntimeError:  # not inside a LangGraph run
            thread = None
        if not thread:
            msg = "SkillsvcBackend has no thread: pass thread=... or run the agent with config {'configurable': {'thread_id': ...}}"
            raise RuntimeError(msg)
        return str(thread)

    def client(self) -> Client:
        """The synchronous client for the current thread."""
        thread = self._current_thread()
        return self._client if thread in (None, self._client.identity.thread) else self._client.with_identity(thread=thread)

    def aclient(self) -> AsyncClient:
        """The async client for the current thread (created on first use,
        inside the running event loop)."""
        if self._aclient is None:
            self._aclient = AsyncClient(self._target, thread=self._thread, **self._kwargs)
        thread = self._current_thread()
        return self._aclient if thread in (None, self._aclient.identity.thread) else self._aclient.with_identity(thread=thread)

    # ls

    def ls(self, path: str) -> LsResult:
        try:
            return _ls_result(list(self.client().iter_list(_dir(path))))
        except SkillsvcError as err:
            return LsResult(error=_error(err, path, "directory"))

    async def als(self, path: str) -> LsResult:
        try:
            return _ls_result([e async for e in self.aclient().iter_list(_dir(path))])
        except SkillsvcError as err:
            return LsResult(error=_error(err, path, "directory"))

    # read

    def read(self, file_path: str, offset: int = 0, limit: int = 2000) -> ReadResult:
        if limit <= 0:
            return ReadResult(file_data={"content": "", "encoding": "utf-8"}, no_lines_requested=True)
        offset = max(offset, 0)
        c = self.client()
        try:
            return _read_result(c.read(file_path, offset=offset, limit=limit), offset)
        except SkillsvcError as err:
            if _is_binary(err):
                try:
                    return _binary_result(c.download(file_path, limit=MAX_BINARY_READ + 1))
                except SkillsvcError as err2:
                    err = err2
            return ReadResult(error=_read_error(err, file_path, offset))

    async def aread(self, file_path: str, offset: int = 0, limit: int = 2000) -> ReadResult:
        if limit <= 0:
            return ReadResult(file_data={"content": "", "encoding": "utf-8"}, no_lines_requested=True)
        offset = max(offset, 0)
        c = self.aclient()
        try:
            return _read_result(await c.read(file_path, offset=offset, limit=limit), offset)
        except SkillsvcError as err:
            if _is_binary(err):
                try:
                    return _binary_result(await c.download(file_path, limit=MAX_BINARY_READ + 1))
                except SkillsvcError as err2:
                    err = err2
            return ReadResult(error=_read_error(err, file_path, offset))

    # write, edit, delete

    def write(self, file_path: str, content: str) -> WriteResult:
        try:
            self.client().write(file_path, content)
        except SkillsvcError as err:
            return WriteResult(error=_error(err, file_path))
        return WriteResult(path=file_path)

    async def awrite(self, file_path: str, content: str) -> WriteResult:
        try:
            await self.aclient().write(file_path, content)
        except SkillsvcError as err:
            return WriteResult(error=_error(err, file_path))
        return WriteResult(path=file_path)

    def edit(self, file_path: str, old_string: str, new_string: str, replace_all: bool = False) -> EditResult:  # noqa: FBT001, FBT002
        try:
            r = self.client().edit(file_path, old_string, new_string, replace_all=replace_all)
        except SkillsvcError as err:
            return EditResult(error=_error(err, file_path))
        return EditResult(path=file_path, occurrences=r.occurrences)

    async def aedit(self, file_path: str, old_string: str, new_string: str, replace_all: bool = False) -> EditResult:  # noqa: FBT001, FBT002
        try:
            r = await self.aclient().edit(file_path, old_string, new_string, replace_all=replace_all)
        except SkillsvcError as err:
            return EditResult(error=_error(err, file_path))
        return EditResult(path=file_path, occurrences=r.occurrences)

    def delete(self, file_path: str) -> DeleteResult:
        try:
            self.client().delete(file_path, recursive=True)
        except SkillsvcError as err:
            return DeleteResult(error=_error(err, file_path))
        return DeleteResult(path=file_path)

    async def adelete(self, file_path: str) -> DeleteResult:
        try:
            await self.aclient().delete(file_path, recursive=True)
        except SkillsvcError as err:
            return DeleteResult(error=_error(err, file_path))
        return DeleteResult(path=file_path)

    # glob, grep

    def glob(self, pattern: str, path: str | None = None) -> GlobResult:
        try:
            return _glob_result(self.client().glob(_pattern(pattern), path=_dir(path)))
        except SkillsvcError as err:
            return GlobResult(error=_error(err, path or "/"))

    async def aglob(self, pattern: str, path: str | None = None) -> GlobResult:
        try:
            return _glob_result(await self.aclient().glob(_pattern(pattern), path=_dir(path)))
        except SkillsvcError as err:
            return GlobResult(error=_error(err, path or "/"))

    def grep(self, pattern: str, path: str | None = None, glob: str | None = None, *, max_count: int | None = None) -> GrepResult:
        try:
            r = self.client().grep(pattern, path=_dir(path), glob=_pattern(glob) if glob else "", max_matches=max_count or 0)
        except SkillsvcError as err:
            return GrepResult(error=_error(err, path or "/"))
        return _grep_result(r, max_count)

    async def agrep(self, pattern: str, path: str | None = None, glob: str | None = None, *, max_count: int | None = None) -> GrepResult:
        try:
            r = await self.aclient().grep(pattern, path=_dir(path), glob=_pattern(glob) if glob else "", max_matches=max_count or 0)
        except SkillsvcError as err:
            return GrepResult(error=_error(err, path or "/"))
        return _grep_result(r, max_count)

    # upload_files, download_files: batches with partial success

    def upload_files(self, files: list[tuple[str, bytes]]) -> list[FileUploadResponse]:
        c = self.client()
        out = []
        for path, data in files:
            try:
                c.upload(path, data)
                out.append(FileUploadResponse(path=path))
            except SkillsvcError as err:
                out.append(FileUploadResponse(path=path, error=_file_error(err)))
        return out

    async def aupload_files(self, files: list[tuple[str, bytes]]) -> list[FileUploadResponse]:
        c = self.aclient()
        out = []
        for path, data in files:
            try:
                await c.upload(path, data)
                out.append(FileUploadResponse(path=path))
            except SkillsvcError as err:
                out.append(FileUploadResponse(path=path, error=_file_error(err)))
        return out

    def download_files(self, paths: list[str]) -> list[FileDownloadResponse]:
        c = self.client()
        out = []
        for path in paths:
            try:
                out.append(FileDownloadResponse(path=path, content=c.download(path)))
            except SkillsvcError as err:
                out.append(FileDownloadResponse(path=path, error=_file_error(err)))
        return out

    async def adownload_files(self, paths: list[str]) -> list[FileDownloadResponse]:
        c = self.aclient()
        out = []
        for path in paths:
            try:
                out.append(FileDownloadResponse(path=path, content=await c.download(path)))
            except SkillsvcError as err:
                out.append(FileDownloadResponse(path=path, error=_file_error(err)))
        return out


def skill_sources(client: Client | SkillsvcBackend, mount: str = "/skills") -> list[str]:
    """The skill sources for ``create_deep_agent(skills=...)``.

    The skills middleware looks for ``<source>/<skill>/SKILL.md``, one level
    down, while a skillsvc library is ``/skills/<category>/<skill>/SKILL.md``:
    so each category is a source (and /skills itself when it holds skills
    outside any category).
    """
    if isinstance(client, SkillsvcBackend):
        client = client._client if client._thread else client._client.with_identity(thread="skill-sources")
    cats = client.list_categories().categories
    return [f"{mount}/{c.name}/" if c.name else f"{mount}/" for c in cats if c.skill_count]


def _dir(path: str | None) -> str:
    """A directory argument as skillsvc takes it: deepagents writes
    directories with a trailing "/", skillsvc paths are canonical."""
    if not path:
        return "/"
    return path.rstrip("/") or "/"


def _pattern(pattern: str) -> str:
    """The backend contract's glob: a pattern without "/" matches the base
    name at any depth, a leading "/" anchors to the search root."""
    if pattern.startswith("/"):
        return pattern.lstrip("/")
    return pattern if "/" in pattern else "**/" + pattern


def _iso(info: filesystem_pb2.FileInfo) -> str:
    if not info.HasField("modified"):
        return ""
    return info.modified.ToDatetime(tzinfo=timezone.utc).isoformat()


def _info(e: filesystem_pb2.FileInfo) -> FileInfo:
    if e.is_dir:
        return FileInfo(path=e.path.rstrip("/") + "/", is_dir=True, size=0, modified_at="")
    return FileInfo(path=e.path, is_dir=False, size=e.size, modified_at=_iso(e))


def _ls_result(entries: list[filesystem_pb2.FileInfo]) -> LsResult:
    return LsResult(entries=sorted((_info(e) for e in entries), key=lambda i: i["path"]))


def _read_result(r: filesystem_pb2.ReadResponse, offset: int) -> ReadResult:
    content = r.content
    if not content.strip():
        return ReadResult(file_data={"content": content, "encoding": "utf-8"})
    if r.next_offset < r.total_lines:
        content += "\n"  # the window ends inside the file, after a line break
    return ReadResult(
        file_data={"content": content, "encoding": "utf-8"},
        total_lines=r.total_lines,
        start_line=offset + 1,
        end_line=r.next_offset,
        next_offset=r.next_offset if r.next_offset < r.total_lines else None,
    )


def _binary_result(data: bytes) -> ReadResult:
    if len(data) > MAX_BINARY_READ:
        return ReadResult(error=f"Error: binary file is larger than {MAX_BINARY_READ} bytes")
    return ReadResult(file_data={"content": base64.standard_b64encode(data).decode("ascii"), "encoding": "base64"})


def _is_binary(err: SkillsvcError) -> bool:
    return err.code == grpc.StatusCode.FAILED_PRECONDITION and "binary" in err.message


def _read_error(err: SkillsvcError, path: str, offset: int) -> str:
    if err.code == grpc.StatusCode.OUT_OF_RANGE:
        return f"Line offset {offset} exceeds file length"
    if err.code == grpc.StatusCode.NOT_FOUND:
        return f"File '{path}' not found"
    return f"Error: {err.message}"


def _error(err: SkillsvcError, path: str, what: str = "File") -> str:
    """The message a model reads, worded as deepagents' own backends word
    theirs where the meaning is the same."""
    if err.code == grpc.StatusCode.NOT_FOUND:
        return f"Error: {what.capitalize()} '{path}' not found"
    return f"Error: {err.message}"


def _file_error(err: SkillsvcError) -> str:
    """The protocol's error literal for a batch upload or download."""
    if err.code == grpc.StatusCode.NOT_FOUND:
        return FILE_NOT_FOUND
    if err.code == grpc.StatusCode.PERMISSION_DENIED:
        return PERMISSION_DENIED
    if err.code == grpc.StatusCode.INVALID_ARGUMENT:
        return INVALID_PATH
    if err.code == grpc.StatusCode.FAILED_PRECONDITION and "directory" in err.message:
        return IS_DIRECTORY
    return f"{err.code.name}: {err.message}"


def _glob_result(r: filesystem_pb2.GlobResponse) -> GlobResult:
    matches = [_info(m) for m in r.matches if not m.is_dir]
    return GlobResult(matches=matches, truncated=r.truncated, truncation_reason="budget" if r.truncated else None)


def _grep_result(r: filesystem_pb2.GrepResponse, max_count: int | None) -> GrepResult:
    matches = [GrepMatch(path=m.path, line=int(m.line), text=m.text) for m in r.matches]
    truncated = r.truncated
    if max_count is not None and len(matches) > max_count:
        matches, truncated = matches[:max_count], True
    return GrepResult(matches=matches, truncated=truncated)
