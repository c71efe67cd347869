"""SkillsvcBackend: skillsvc as the filesystem of a LangChain Deep Agent.

    from deepagents import create_deep_agent
    from skillsvc import Client
    from skillsvc.deepagents import SkillsvcBackend, skill_sources

    backend = SkillsvcBackend("127.0.0.1:7070", user="alice")
    agent = create_deep_agent(model=..., backend=backend, middleware=[SkillsPromptMiddleware(backend)])
    agent.invoke({"messages": [...]}, {"configurable": {"thread_id": "t1"}})

SkillsPromptMiddleware puts the skills block (FormatSkills) in the system
prompt before each model call, asking for the skills relevant to the
user's latest message, so a library of thousands shows the agent the few
that fit its task. ``skill_sources`` instead hands the library to
deepagents' own skills middleware, which lists every skill.

The agent's file tools work on /workspace (the thread's scratch space),
/ticket and the read-only /skills library, and the skills middleware reads
skills from the service. It implements deepagents' BackendProtocol (0.7):
every method, the async ones natively on grpc.aio, with the protocol's
result types and error literals. Without a fixed thread, each call takes the
thread from the LangGraph run's config (configurable.thread_id), so one
backend serves every thread of a graph, each as its own identity.

Results and messages are those of deepagents' own Python backends
(FilesystemBackend where the backends differ), held to the outcomes of
deepagents' backend tests by tests/test_deepagents_contract.py: glob leaves
names starting with "." out unless the pattern names them, and a pattern
without "/" matches base names at any depth; edit accepts CRLF in its
strings and keeps a CRLF file CRLF; an empty file reads as deepagents'
empty-file reminder; refused edits get deepagents' own wording and hints.

With bubblewrap on the machine the backend is also a sandbox backend
(deepagents' SandboxBackendProtocol), so the agent gets the ``execute``
tool: a shell command runs here, confined (no network, nothing of the host
but /usr and the interpreters' runtime), in a scratch copy of the thread's
/workspace, with every skill it names by a /skills/ path materialized and
seen read-only at that path; what it writes in /workspace is written back
to the thread. See ``SkillsvcBackend``'s ``execute`` argument.

deepagents' middleware keeps evicted tool results, offloaded conversation
history and binary blobs in folders at the root (/large_tool_results,
/conversation_history, /blobs), where skillsvc has only its mounts: so
those folders live under the thread's /workspace (``artifacts=``), and
paths below them are shown as the caller named them.
"""

from __future__ import annotations

import asyncio
import base64
import re
import uuid
import warnings
from collections.abc import Awaitable, Callable, Generator
from dataclasses import dataclass, field
from datetime import timezone
from typing import Any, Literal, TypeVar

import grpc
from deepagents.backends.protocol import (
    FILE_NOT_FOUND,
    INVALID_PATH,
    IS_DIRECTORY,
    PERMISSION_DENIED,
    BackendProtocol,
    DeleteResult,
    EditResult,
    ExecuteResponse,
    FileDownloadResponse,
    FileInfo,
    FileUploadResponse,
    GlobResult,
    GrepMatch,
    GrepResult,
    LsResult,
    ReadResult,
    SandboxBackendProtocol,
    WriteResult,
)
from deepagents.backends.utils import (
    EMPTY_CONTENT_WARNING,
    InvalidGlobPatternError,
    _get_backend_read_file_type,
    compile_grep_include_glob,
    perform_string_replacement,
)
from langchain.agents.middleware import AgentMiddleware, ModelRequest, ModelResponse
from langchain_core.messages import AnyMessage, HumanMessage, SystemMessage

from . import runner
from .client import DEFAULT_TARGET, MAX_QUERY_BYTES, AsyncClient, Client, bounded_query
from .errors import InvalidArgument, NotFound, SkillsvcError
from .v1 import filesystem_pb2, skills_pb2

__all__ = ["SKILLS_PROMPT", "SkillsPromptMiddleware", "SkillsvcBackend", "SkillsvcSandboxBackend", "skill_sources"]

# Binary files are returned whole, base64-encoded, up to this size; a
# refused edit reads the file (up to this size) to word its answer.
MAX_BINARY_READ = 10 << 20

# Lines one read returns when deepagents asks for none (limit=0), to tell an
# empty file from one not inspected, as deepagents does.
_PROBE_LINES = 2000

# The folders deepagents' middleware writes at its artifacts root, which is
# "/" unless a CompositeBackend names another (filesystem.py,
# summarization.py, _blob_offload.py): evicted tool results, offloaded
# history and its media, binary blobs.
ARTIFACT_ROOTS = ("/large_tool_results", "/conversation_history", "/blobs")


class SkillsvcBackend(BackendProtocol):
    """A deepagents backend over skillsvc, for one user.

    Pass ``thread`` to pin one thread; leave it out to take the thread from
    each LangGraph run's ``configurable.thread_id``. In jwt mode pass
    ``token``: the token names user and thread, so one backend per thread.
    Other keyword arguments (ticket, tls, timeout, ...) go to the clients.

    ``artifacts`` is the folder that holds the middleware's root folders
    (ARTIFACT_ROOTS): "/large_tool_results/x" is stored as
    "/workspace/large_tool_results/x" and shown by its own name. None passes
    those paths on as they are (for a mount table that has such mounts).

    ``execute`` says whether the agent can run shell commands, and where
    (deepagents offers its ``execute`` tool only to a backend that is a
    SandboxBackendProtocol, so the choice picks the class: a
    SkillsvcSandboxBackend when commands can run):

    - "auto" (the default): under bubblewrap where it runs; elsewhere no
      ``execute`` tool at all, since a command the model writes should not
      run unconfined on this host unless asked for;
    - "bwrap": under bubblewrap, SandboxUnavailable where it does not run;
    - "none": a plain subprocess, unconfined (it sees the whole host as this
      process's user, as deepagents' LocalShellBackend), with a warning;
    - a ``skillsvc.runner.Sandbox`` of your own;
    - False: no ``execute`` tool (needed, for one, with deepagents'
      filesystem permissions, which refuse a backend that executes).

    A command gets ``execute_timeout`` seconds unless the call gives its
    own, at most ``max_output_bytes`` of stdout and of stderr (then it is
    killed and its output marked truncated), ``memory_bytes`` of address
    space, and no network unless ``network``; skills are materialized in
    ``cache_dir`` (default: skillsvc.runner.cache_root()).
    """

    def __new__(cls, *args: Any, **kwargs: Any) -> SkillsvcBackend:
        if "_sandbox" in kwargs:  # a copy (__getnewargs_ex__): its class and sandbox as they were
            backend = super().__new__(cls)
            backend._sandbox = kwargs["_sandbox"]
            return backend
        sandbox = _execution_sandbox(kwargs.get("execute", "auto"))
        if cls is SkillsvcBackend and sandbox is not None:
            cls = SkillsvcSandboxBackend
        if issubclass(cls, SandboxBackendProtocol) and sandbox is None:
            msg = f"{cls.__name__} runs commands, but execute={kwargs.get('execute', 'auto')!r} gives it no sandbox (bubblewrap is not available here?)"
            raise runner.SandboxUnavailable(msg)
        backend = super().__new__(cls)
        backend._sandbox = sandbox
        return backend

    def __getnewargs_ex__(self) -> tuple[tuple[Any, ...], dict[str, Any]]:
        return (), {"_sandbox": self._sandbox}

    def __init__(
        self,
        target: str = DEFAULT_TARGET,
        *,
        user: str | None = None,
        thread: str | None = None,
        artifacts: str | None = "/workspace",
        execute: Literal["auto", "bwrap", "none", False] | runner.Sandbox = "auto",
        execute_timeout: float = runner.DEFAULT_TIMEOUT,
        max_output_bytes: int = runner.DEFAULT_MAX_OUTPUT_BYTES,
        memory_bytes: int = runner.DEFAULT_MEMORY_BYTES,
        network: bool = False,
        cache_dir: str | None = None,
        **client_kwargs: Any,
    ) -> None:
        self._artifacts = _Artifacts.under(artifacts)
        self._target = target
        self._thread = thread
        self._kwargs = {"user": user, **client_kwargs}
        self._client = Client(target, thread=thread, **self._kwargs)
        self._aclient: AsyncClient | None = None
        self._limits = _Limits(runner._checked_timeout(execute_timeout), max_output_bytes, memory_bytes, network, cache_dir)
        self._sandbox: runner.Sandbox | None
        self._id = f"skillsvc-{uuid.uuid4().hex[:8]}"

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

    # Each operation is written once, as steps (see _Call), which _run
    # performs on the synchronous client and _arun on the async one.

    def ls(self, path: str) -> LsResult:
        return _run(_ls(self._artifacts, path), self.client())

    async def als(self, path: str) -> LsResult:
        return await _arun(_ls(self._artifacts, path), self.aclient())

    def read(self, file_path: str, offset: int = 0, limit: int = 2000) -> ReadResult:
        return _run(_read(self._artifacts, file_path, offset, limit), self.client())

    async def aread(self, file_path: str, offset: int = 0, limit: int = 2000) -> ReadResult:
        return await _arun(_read(self._artifacts, file_path, offset, limit), self.aclient())

    def write(self, file_path: str, content: str) -> WriteResult:
        return _run(_write(self._artifacts, file_path, content), self.client())

    async def awrite(self, file_path: str, content: str) -> WriteResult:
        return await _arun(_write(self._artifacts, file_path, content), self.aclient())

    def edit(self, file_path: str, old_string: str, new_string: str, replace_all: bool = False) -> EditResult:  # noqa: FBT001, FBT002
        return _run(_edit(self._artifacts, file_path, old_string, new_string, replace_all), self.client())

    async def aedit(self, file_path: str, old_string: str, new_string: str, replace_all: bool = False) -> EditResult:  # noqa: FBT001, FBT002
        return await _arun(_edit(self._artifacts, file_path, old_string, new_string, replace_all), self.aclient())

    def delete(self, file_path: str) -> DeleteResult:
        return _run(_delete(self._artifacts, file_path), self.client())

    async def adelete(self, file_path: str) -> DeleteResult:
        return await _arun(_delete(self._artifacts, file_path), self.aclient())

    def glob(self, pattern: str, path: str | None = None) -> GlobResult:
        return _run(_glob(self._artifacts, pattern, path), self.client())

    async def aglob(self, pattern: str, path: str | None = None) -> GlobResult:
        return await _arun(_glob(self._artifacts, pattern, path), self.aclient())

    def grep(self, pattern: str, path: str | None = None, glob: str | None = None, *, max_count: int | None = None) -> GrepResult:
        return _run(_grep(self._artifacts, pattern, path, glob, max_count), self.client())

    async def agrep(self, pattern: str, path: str | None = None, glob: str | None = None, *, max_count: int | None = None) -> GrepResult:
        return await _arun(_grep(self._artifacts, pattern, path, glob, max_count), self.aclient())

    # upload_files, download_files: batches with partial success

    def upload_files(self, files: list[tuple[str, bytes]]) -> list[FileUploadResponse]:
        c = self.client()
        return [_run(_upload(self._artifacts, path, data), c) for path, data in files]

    async def aupload_files(self, files: list[tuple[str, bytes]]) -> list[FileUploadResponse]:
        c = self.aclient()
        return [await _arun(_upload(self._artifacts, path, data), c) for path, data in files]

    def download_files(self, paths: list[str]) -> list[FileDownloadResponse]:
        c = self.client()
        return [_run(_download(self._artifacts, path), c) for path in paths]

    async def adownload_files(self, paths: list[str]) -> list[FileDownloadResponse]:
        c = self.aclient()
        return [await _arun(_download(self._artifacts, path), c) for path in paths]


class SkillsvcSandboxBackend(SkillsvcBackend, SandboxBackendProtocol):
    """SkillsvcBackend with deepagents' ``execute``: what SkillsvcBackend(...)
    is when its ``execute`` argument gives commands a sandbox.

    ``execute(command, timeout=None)`` runs ``bash -c command`` through
    skillsvc.runner.run_command: the working directory is a scratch copy of
    the thread's /workspace, seen as /workspace; every skill the command
    names by a path under /skills/ (``python3
    /skills/docs/pdf/scripts/x.py /workspace/a.pdf``) is materialized
    (verified against its manifest, cached by digest) and seen read-only at
    that folder; the files the command creates or changes in /workspace are
    written back to the thread when it ends. The response's output is its
    stdout, then its stderr; on a timeout exit_code is None and the output
    ends with a line saying the command was killed.
    """

    @property
    def id(self) -> str:
        return self._id

    def execute(self, command: str, *, timeout: int | None = None) -> ExecuteResponse:
        assert self._sandbox is not None
        return _execute(self.client(), self._sandbox, self._limits, command, timeout)

    async def aexecute(self, command: str, *, timeout: int | None = None) -> ExecuteResponse:  # noqa: ASYNC109
        assert self._sandbox is not None
        # The runner is synchronous (a subprocess, file copies): it runs in a
        # thread, making the async client's calls on this loop.
        calls = runner._SyncCalls(self.aclient(), asyncio.get_running_loop())
        return await asyncio.to_thread(_execute, calls, self._sandbox, self._limits, command, timeout)


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


# The skills section SkillsPromptMiddleware adds to the system prompt;
# {skills} is the FormatSkills block.
SKILLS_PROMPT = """## Skills

Skills are folders of instructions, scripts and references for particular tasks. \
Before acting on a task a skill below fits, read its SKILL.md with read_file (the location shown, limit=1000) \
and follow it; read the files it names by their absolute paths under its folder.

{skills}"""


class SkillsPromptMiddleware(AgentMiddleware):
    """Puts the caller's skills block (FormatSkills) in the system prompt
    before every model call, for ``create_deep_agent(middleware=[...])``.

    ``query`` chooses what the block is selected for: True (the default),
    the latest user message, cut to ``max_query_bytes`` (the server's
    --skills.max-query-bytes) on a character boundary, so the block holds
    the skills most relevant to the task, best first; a string, that fixed
    task; False, none (the caller's own skills first, then its teams', then
    the organization's). ``scope`` names a skill set ("": the backend's
    identity's). The other arguments are FormatSkills'. ``system_prompt``
    is the section added, with a ``{skills}`` slot; an empty block adds
    nothing.
    """

    def __init__(
        self,
        backend: SkillsvcBackend,
        *,
        query: bool | str = True,
        scope: str = "",
        char_budget: int = 0,
        max_skills: int = 0,
        format: Literal["", "xml", "markdown", "yaml"] = "",
        group_by_category: bool = False,
        search_tool: str = "",
        max_query_bytes: int = MAX_QUERY_BYTES,
        system_prompt: str = SKILLS_PROMPT,
    ) -> None:
        if "{skills}" not in system_prompt:
            msg = "system_prompt must contain the {skills} slot"
            raise ValueError(msg)
        self._backend = backend
        self._query = query
        self._max_query_bytes = max_query_bytes
        self._template = system_prompt
        self._kwargs: dict[str, Any] = {
            "scope": scope,
            "char_budget": char_budget,
            "max_skills": max_skills,
            "format": format,
            "group_by_category": group_by_category,
            "search_tool": search_tool,
        }

    def query(self, messages: list[AnyMessage]) -> str:
        """The query the block is selected for, given the request's messages."""
        if isinstance(self._query, str):
            return bounded_query(self._query, self._max_query_bytes)
        if not self._query:
            return ""
        for m in reversed(messages):
            if isinstance(m, HumanMessage):
                return bounded_query(str(m.text).strip(), self._max_query_bytes)
        return ""

    def _with_block(self, request: ModelRequest, r: skills_pb2.FormatSkillsResponse) -> ModelRequest:
        if not r.included:
            return request
        section = self._template.replace("{skills}", r.text)
        return request.override(system_message=_append_system(request.system_message, section))

    def wrap_model_call(self, request: ModelRequest, handler: Callable[[ModelRequest], ModelResponse]) -> Any:
        r = self._backend.client().format_skills(query=self.query(request.messages), **self._kwargs)
        return handler(self._with_block(request, r))

    async def awrap_model_call(self, request: ModelRequest, handler: Callable[[ModelRequest], Awaitable[ModelResponse]]) -> Any:
        r = await self._backend.aclient().format_skills(query=self.query(request.messages), **self._kwargs)
        return await handler(self._with_block(request, r))


def _append_system(system: SystemMessage | None, text: str) -> SystemMessage:
    """The system message with text appended as a block of its own (its
    other blocks, such as cache controls, kept)."""
    blocks: list[Any] = list(system.content_blocks) if system else []
    blocks.append({"type": "text", "text": f"\n\n{text}" if blocks else text})
    return SystemMessage(content_blocks=blocks)


# Steps: each operation is a generator that yields the calls it needs
# (_Call), receives each call's result or has its SkillsvcError thrown in,
# and returns the protocol's result. So every decision is written once for
# the synchronous and the async client.

T = TypeVar("T")
Steps = Generator["_Call", Any, T]


@dataclass(frozen=True)
class _Call:
    """A client method to call: "list_all" is every page of a listing."""

    method: str
    args: tuple[Any, ...] = ()
    kwargs: dict[str, Any] = field(default_factory=dict)


def _call(method: str, *args: Any, **kwargs: Any) -> _Call:
    return _Call(method, args, kwargs)


def _run(steps: Steps[T], client: Client) -> T:
    try:
        call = next(steps)
        while True:
            try:
                if call.method == "list_all":
                    result: Any = list(client.iter_list(*call.args))
                else:
                    result = getattr(client, call.method)(*call.args, **call.kwargs)
            except SkillsvcError as err:
                call = steps.throw(err)
            else:
                call = steps.send(result)
    except StopIteration as done:
        return done.value


async def _arun(steps: Steps[T], client: AsyncClient) -> T:
    try:
        call = next(steps)
        while True:
            try:
                if call.method == "list_all":
                    result: Any = [e async for e in client.iter_list(*call.args)]
                else:
                    result = await getattr(client, call.method)(*call.args, **call.kwargs)
            except SkillsvcError as err:
                call = steps.throw(err)
            else:
                call = steps.send(result)
    except StopIteration as done:
        return done.value


@dataclass(frozen=True)
class _Artifacts:
    """Where the middleware's root folders are kept: in ``root``, a folder of
    the service, or (root None) at the paths as given."""

    root: str | None

    @staticmethod
    def under(folder: str | None) -> _Artifacts:
        if folder is None:
            return _Artifacts(None)
        if not isinstance(folder, str) or not folder.startswith("/"):
            msg = f"artifacts must be an absolute folder such as '/workspace', or None: got {folder!r}"
            raise ValueError(msg)
        return _Artifacts(folder.rstrip("/") or None)  # "/" keeps them where they are

    def path(self, path: str) -> str:
        """A path as skillsvc takes it: below a root folder, moved under root
        (repeated "/" collapse there, as a shell treats them)."""
        if self.root is None:
            return path
        p = re.sub(r"/{2,}", "/", path)
        if any(p == r or p.startswith(r + "/") for r in ARTIFACT_ROOTS):
            return self.root + p
        return path

    def shown(self, asked: str | None) -> Callable[[str], str]:
        """Paths skillsvc returned, as the caller names them: below a folder
        asked for by its root name, by that name again."""
        root = self.root
        if root is None or asked is None or self.path(asked) == asked:
            return lambda p: p
        return lambda p: p[len(root) :] if p.startswith(root + "/") else p


def _ls(art: _Artifacts, path: str) -> Steps[LsResult]:
    shown = art.shown(path)
    try:
        entries = yield _call("list_all", _dir(art.path(path)))
    except SkillsvcError as err:
        # FilesystemBackend's wording; the middleware prefixes "Error: ".
        if err.code == grpc.StatusCode.NOT_FOUND:
            return LsResult(error=f"Path '{path}': path_not_found")
        if _is_not_dir(err):
            return LsResult(error=f"Path '{path}': not_a_directory")
        return LsResult(error=f"Cannot list '{path}': {err.message}")
    return LsResult(entries=sorted((_info(e, shown) for e in entries), key=lambda i: i["path"]))


def _read(art: _Artifacts, path: str, offset: int, limit: int) -> Steps[ReadResult]:
    offset, limit = max(int(offset), 0), max(int(limit), 0)
    if _get_backend_read_file_type(path) != "text":
        # deepagents returns images, audio, video and documents whole.
        return (yield from _read_binary(art, path))
    try:
        r = yield _call("read", art.path(path), offset=offset, limit=limit or _PROBE_LINES)
    except SkillsvcError as err:
        # A file of another kind is an error, as FilesystemBackend's failed
        # UTF-8 decode is (the middleware could not show it as text either).
        if err.code != grpc.StatusCode.OUT_OF_RANGE:
            return ReadResult(error=_read_error(err, path))
        r = None
    if r is None or (offset > 0 and not r.content.strip()):
        # deepagents judges a file blank as a whole, whatever the window,
        # and says how long a file is that an offset is past.
        try:
            whole = yield _call("read", art.path(path))
        except SkillsvcError as err:
            return ReadResult(error=_read_error(err, path))
        if _blank(whole):
            return ReadResult(file_data={"content": EMPTY_CONTENT_WARNING, "encoding": "utf-8"})
    elif offset == 0 and _blank(r):
        return ReadResult(file_data={"content": EMPTY_CONTENT_WARNING, "encoding": "utf-8"})
    if limit == 0:  # after the blank check, before the offset's, as deepagents
        return ReadResult(file_data={"content": "", "encoding": "utf-8"}, no_lines_requested=True)
    if r is None:
        return ReadResult(error=f"Line offset {offset} exceeds file length ({whole.total_lines} lines)")
    # Lines come without their "\n", and a CRLF line keeps its "\r";
    # deepagents shows LF only, lone CRs included.
    content = r.content.replace("\r\n", "\n")
    if r.next_offset < r.total_lines or r.ends_with_newline:
        content = content.removesuffix("\r") + "\n"  # the window's last line is terminated
    content = content.replace("\r", "\n")
    return ReadResult(
        file_data={"content": content, "encoding": "utf-8"},
        total_lines=r.total_lines,
        start_line=offset + 1,
        end_line=r.next_offset,
        next_offset=r.next_offset if r.next_offset < r.total_lines else None,
    )


def _read_binary(art: _Artifacts, path: str) -> Steps[ReadResult]:
    try:
        data = yield _call("download", art.path(path), limit=MAX_BINARY_READ + 1)
    except SkillsvcError as err:
        return ReadResult(error=_read_error(err, path))
    if len(data) > MAX_BINARY_READ:
        return ReadResult(error=f"Error reading file '{path}': binary file is larger than {MAX_BINARY_READ} bytes")
    return ReadResult(file_data={"content": base64.standard_b64encode(data).decode("ascii"), "encoding": "base64"})


def _blank(r: filesystem_pb2.ReadResponse) -> bool:
    """Whether a read from the first line holds the whole file, and the
    file is empty or whitespace only."""
    return r.next_offset >= r.total_lines and not r.content.strip()


def _write(art: _Artifacts, path: str, content: str) -> Steps[WriteResult]:
    try:
        yield _call("write", art.path(path), content)
    except SkillsvcError as err:
        return WriteResult(error=f"Error writing file '{path}': {err.message}")
    return WriteResult(path=path)


def _edit(art: _Artifacts, path: str, old: str, new: str, replace_all: bool) -> Steps[EditResult]:  # noqa: FBT001
    # As FilesystemBackend: the file is LF text to the model, so strings
    # copied from a CRLF download still apply.
    old_lf, new_lf = _lf(old), _lf(new)
    refusal = None
    if old_lf and old_lf != new_lf:
        try:
            r = yield _call("edit", art.path(path), old_lf, new_lf, replace_all=replace_all)
        except SkillsvcError as err:
            if not _is_mismatch(err):
                return EditResult(error=_edit_error(err, path))
            refusal = err.message
        else:
            return EditResult(path=path, occurrences=int(r.occurrences))
    # The server refused, or was not asked (an empty old_string, or one equal
    # to new_string, which it refuses and deepagents does not): the file's
    # text decides the answer.
    try:
        data = yield _call("download", art.path(path), limit=MAX_BINARY_READ + 1)
    except SkillsvcError as err:
        return EditResult(error=_edit_error(err, path))
    if len(data) > MAX_BINARY_READ:
        return EditResult(error=f"Error editing file '{path}': {refusal or 'the file is too large to edit'}")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        text = None
    if text is None or "\x00" in text:
        return EditResult(error=_BINARY_EDIT)
    if refusal is not None and "\n" in old_lf and old_lf not in text and _crlf(old_lf) in text:
        # A CRLF file: apply the strings with its line breaks, keeping it CRLF.
        try:
            r = yield _call("edit", art.path(path), _crlf(old_lf), _crlf(new_lf), replace_all=replace_all)
        except SkillsvcError as err:
            if not _is_mismatch(err):
                return EditResult(error=_edit_error(err, path))
        else:
            return EditResult(path=path, occurrences=int(r.occurrences))
    result = perform_string_replacement(_lf(text), old_lf, new_lf, replace_all)
    if isinstance(result, str):
        return EditResult(error=result)  # deepagents' own wording and hints
    if refusal is None:
        return EditResult(path=path, occurrences=int(result[1]))  # nothing to change
    return EditResult(error=f"Error editing file '{path}': {refusal}")  # changed since the refusal


def _delete(art: _Artifacts, path: str) -> Steps[DeleteResult]:
    try:
        yield _call("delete", art.path(path), recursive=True)
    except SkillsvcError as err:
        if err.code == grpc.StatusCode.NOT_FOUND:
            return DeleteResult(error=f"Error: File '{path}' not found")
        return DeleteResult(error=f"Error deleting '{path}': {err.message}")
    return DeleteResult(path=path)


def _glob(art: _Artifacts, pattern: str, path: str | None) -> Steps[GlobResult]:
    # deepagents' own check first, so a refused pattern reads as its refusal.
    try:
        compile_grep_include_glob(pattern)
    except InvalidGlobPatternError as exc:
        return GlobResult(error=str(exc))
    # deepagents' contract: names starting with "." only where the pattern
    # names them; a pattern without "/" matches base names at any depth; a
    # leading "/" anchors the pattern to the search root.
    relative = pattern.lstrip("/")
    if not relative or relative.endswith("/") or "//" in relative:
        return GlobResult(matches=[])  # it could name directories only, as wcmatch reads it
    try:
        r = yield _call(
            "glob",
            _doublestar(relative),
            path=_dir(path and art.path(path)),
            hidden=filesystem_pb2.GLOB_HIDDEN_EXPLICIT,
            match_base_name="/" not in pattern,
        )
    except SkillsvcError as err:
        if err.code == grpc.StatusCode.NOT_FOUND:
            return GlobResult(matches=[])  # a search root that is not there
        return GlobResult(error=f"Error globbing path '{path or '/'}': {err.message}", matches=[])
    shown = art.shown(path)
    matches = [_info(m, shown) for m in r.matches if not m.is_dir]
    return GlobResult(matches=matches, truncated=r.truncated, truncation_reason="budget" if r.truncated else None)


def _grep(art: _Artifacts, pattern: str, path: str | None, glob: str | None, max_count: int | None) -> Steps[GrepResult]:
    if glob:
        try:
            compile_grep_include_glob(glob)
        except InvalidGlobPatternError as exc:
            return GrepResult(error=str(exc), matches=[])
    # One match more than asked for tells "exactly max_count" from "more".
    cap = max(max_count, 0) + 1 if max_count is not None else 0
    try:
        r = yield _call("grep", pattern, path=_dir(path and art.path(path)), glob=_doublestar(_grep_glob(glob)), max_matches=cap)
    except SkillsvcError as err:
        if err.code == grpc.StatusCode.NOT_FOUND:
            return GrepResult(matches=[])
        return GrepResult(error=f"Error searching path '{path or '/'}': {err.message}", matches=[])
    shown = art.shown(path)
    matches = [GrepMatch(path=shown(m.path), line=int(m.line), text=m.text.removesuffix("\r")) for m in r.matches]
    if max_count is not None and len(matches) > max_count:
        return GrepResult(matches=matches[: max(max_count, 0)], truncated=True)
    return GrepResult(matches=matches, truncated=r.truncated)


def _upload(art: _Artifacts, path: str, data: bytes) -> Steps[FileUploadResponse]:
    try:
        yield _call("upload", art.path(path), data)
    except SkillsvcError as err:
        return FileUploadResponse(path=path, error=_file_error(err))
    return FileUploadResponse(path=path)


def _download(art: _Artifacts, path: str) -> Steps[FileDownloadResponse]:
    try:
        data = yield _call("download", art.path(path))
    except SkillsvcError as err:
        return FileDownloadResponse(path=path, error=_file_error(err))
    return FileDownloadResponse(path=path, content=data)


def _dir(path: str | None) -> str:
    """A directory argument as skillsvc takes it: deepagents writes
    directories with a trailing "/", skillsvc paths are canonical."""
    if not path:
        return "/"
    return path.rstrip("/") or "/"


def _grep_glob(glob: str | None) -> str:
    """Grep's file filter as skillsvc takes it: a pattern without "/"
    matches base names at any depth, a leading "/" anchors it."""
    if not glob:
        return ""
    if "/" in glob:
        return glob.lstrip("/")
    return "**/" + glob


def _doublestar(pattern: str) -> str:
    """A wcmatch pattern (deepagents' matcher) in the server's doublestar
    syntax: wcmatch, like bash, expands only a brace group with a comma,
    so "{x}" is literal there, and an unmatched brace is literal too."""
    groups: list[int] = []  # open braces, innermost last
    commas: set[int] = set()  # open braces whose group has a comma
    literal: set[int] = set()
    i = 0
    while i < len(pattern):
        c = pattern[i]
        if c == "\\":
            i += 2
            continue
        if c == "[" and (j := pattern.find("]", i + 1)) >= 0:
            i = j + 1
            continue
        if c == "{":
            groups.append(i)
        elif c == "," and groups:
            commas.add(groups[-1])
        elif c == "}":
            if not groups:
                literal.add(i)
            elif (start := groups.pop()) not in commas:
                literal.update((start, i))
        i += 1
    literal.update(groups)
    return "".join("\\" + c if i in literal else c for i, c in enumerate(pattern))


def _lf(s: str) -> str:
    return s.replace("\r\n", "\n").replace("\r", "\n")


def _crlf(s: str) -> str:
    return s.replace("\n", "\r\n")


def _iso(info: filesystem_pb2.FileInfo) -> str:
    if not info.HasField("modified"):
        return ""
    return info.modified.ToDatetime(tzinfo=timezone.utc).isoformat()


def _info(e: filesystem_pb2.FileInfo, shown: Callable[[str], str]) -> FileInfo:
    if e.is_dir:
        return FileInfo(path=shown(e.path).rstrip("/") + "/", is_dir=True, size=0, modified_at="")
    return FileInfo(path=shown(e.path), is_dir=False, size=e.size, modified_at=_iso(e))


# The server's refusals, told apart by code and the fixed start of their
# message (internal/vfs/errors.go, internal/textfile).
def _is_binary(err: SkillsvcError) -> bool:
    return err.code == grpc.StatusCode.FAILED_PRECONDITION and err.message.startswith("binary file")


def _is_mismatch(err: SkillsvcError) -> bool:
    return err.code == grpc.StatusCode.FAILED_PRECONDITION and err.message.startswith("edit does not apply")


def _is_dir(err: SkillsvcError) -> bool:
    return err.code == grpc.StatusCode.FAILED_PRECONDITION and err.message.startswith("is a directory")


def _is_not_dir(err: SkillsvcError) -> bool:
    return err.code == grpc.StatusCode.FAILED_PRECONDITION and err.message.startswith("not a directory")


_BINARY_EDIT = "Error: Cannot edit binary files with text replacements."


def _read_error(err: SkillsvcError, path: str) -> str:
    """read's errors as FilesystemBackend words them (the middleware
    prefixes "Error: "): a directory is no file either."""
    if err.code == grpc.StatusCode.NOT_FOUND or _is_dir(err):
        return f"File '{path}' not found"
    return f"Error reading file '{path}': {err.message}"


def _edit_error(err: SkillsvcError, path: str) -> str:
    if err.code == grpc.StatusCode.NOT_FOUND or _is_dir(err):
        return f"Error: File '{path}' not found"
    if _is_binary(err):
        return _BINARY_EDIT
    return f"Error editing file '{path}': {err.message}"


def _file_error(err: SkillsvcError) -> str:
    """The protocol's error literal for a batch upload or download."""
    if err.code == grpc.StatusCode.NOT_FOUND:
        return FILE_NOT_FOUND
    if err.code == grpc.StatusCode.PERMISSION_DENIED:
        return PERMISSION_DENIED
    if err.code == grpc.StatusCode.INVALID_ARGUMENT:
        return INVALID_PATH
    if _is_dir(err):
        return IS_DIRECTORY
    return f"{err.code.name}: {err.message}"


# execute: shell commands on skillsvc.runner.run_command.


@dataclass(frozen=True)
class _Limits:
    timeout: float
    max_output_bytes: int
    memory_bytes: int
    network: bool
    cache_dir: str | None


def _execution_sandbox(execute: Any) -> runner.Sandbox | None:
    """The sandbox commands run in, or None for no execute tool."""
    if execute is False or execute is None:
        return None
    if execute == "auto":
        # Not the runner's "auto": no fallback to an unconfined subprocess
        # for commands a model writes.
        return runner.BwrapSandbox() if runner.bwrap_available() else None
    if execute == "none":
        warnings.warn(
            "SkillsvcBackend(execute='none'): the agent's shell commands run unconfined on this host", RuntimeWarning, stacklevel=4
        )
        return runner.SubprocessSandbox()
    if execute == "bwrap" or not isinstance(execute, (str, bool)):
        return runner.choose_sandbox(execute)
    msg = f"execute must be 'auto', 'bwrap', 'none', False or a skillsvc.runner.Sandbox, not {execute!r}"
    raise ValueError(msg)


# A path under /skills where a command names one (not inside a longer
# path): /skills/<skill>/... or /skills/<category>/<skill>/...
_SKILL_PATH = re.compile(r"(?<![\w.~/$-])/skills((?:/[A-Za-z0-9_.@+-]+)+)")

# Skills one command may name.
MAX_COMMAND_SKILLS = 16

# What the runner raises, as the tool errors of skillsvc's own tools name it.
_KINDS = {
    runner.WorkspaceTooLarge: "WORKSPACE_TOO_LARGE",
    runner.SandboxUnavailable: "SANDBOX_UNAVAILABLE",
    runner.UnknownInterpreter: "UNKNOWN_INTERPRETER",
}


def _named_skills(client: Any, command: str, cache_dir: str | None) -> dict[str, str]:
    """The skills command names by a /skills/ path, materialized: folder
    seen (/skills/docs/pdf) -> local directory. A path that names no skill
    is the model's error (ValueError, which deepagents shows as an invalid
    parameter)."""
    found: dict[str, str] = {}
    tried: dict[str, str | None] = {}
    for m in _SKILL_PATH.finditer(command):
        parts = m.group(1).strip("/").split("/")
        folder = None
        for depth in (1, 2)[: len(parts)]:
            candidate = "/skills/" + "/".join(parts[:depth])
            if candidate in found:
                folder = candidate
                break
            if any(p in (".", "..") for p in parts[:depth]):
                break
            if candidate not in tried:
                tried[candidate] = None
                try:
                    mat = runner.materialize(client, candidate, cache_dir=cache_dir)
                except NotFound:
                    continue
                if mat.folder == candidate:
                    tried[candidate] = str(mat.path)
            if tried[candidate] is not None:
                if len(found) >= MAX_COMMAND_SKILLS:
                    msg = f"the command names more than {MAX_COMMAND_SKILLS} skills; run it in parts"
                    raise ValueError(msg)
                found[candidate] = tried[candidate]
                folder = candidate
                break
        if folder is None:
            msg = (
                f"{m.group(0)} is in no skill: a command sees the skills it names by their folders, "
                "/skills/<skill>/... or /skills/<category>/<skill>/... (the ls tool lists /skills)"
            )
            raise ValueError(msg)
    return found


def _execute(client: Any, sandbox: runner.Sandbox, limits: _Limits, command: str, timeout: int | None) -> ExecuteResponse:
    if timeout is not None and (isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or timeout <= 0):
        msg = f"timeout must be a positive number of seconds (every command here has one), not {timeout!r}"
        raise ValueError(msg)
    seconds = float(timeout) if timeout is not None else limits.timeout
    if not isinstance(command, str) or not command.strip():
        msg = "command must be a non-empty string"
        raise ValueError(msg)
    try:
        skills = _named_skills(client, command, limits.cache_dir)
        run = runner.run_command(
            client,
            command,
            skills=skills,
            timeout=seconds,
            max_output_bytes=limits.max_output_bytes,
            memory_bytes=limits.memory_bytes,
            network=limits.network,
            sandbox=sandbox,
        )
    except InvalidArgument as err:
        raise ValueError(err.message) from None
    except SkillsvcError as err:
        kind = next((k for cls, k in _KINDS.items() if isinstance(err, cls)), err.code.name)
        return ExecuteResponse(output=f"Error ({kind}): {err.message}", exit_code=None)
    output = run.stdout
    if run.stderr:
        output += ("\n" if output and not output.endswith("\n") else "") + run.stderr
    data = output.encode()
    truncated = run.truncated or len(data) > limits.max_output_bytes
    if len(data) > limits.max_output_bytes:
        output = data[: limits.max_output_bytes].decode("utf-8", "ignore")
    note = ""
    if run.timed_out:
        unit = "second" if seconds == 1 else "seconds"
        note = f"[The command was killed after {seconds:g} {unit}, its timeout; what it wrote in /workspace was not kept.]"
    elif run.truncated:
        note = f"[The command was killed: its output passed {limits.max_output_bytes} bytes; what it wrote in /workspace was not kept.]"
    if note:
        output += ("\n" if output and not output.endswith("\n") else "") + note
    code = run.exit_code
    if code is not None and code < 0:
        code = 128 - code  # killed by a signal, as a shell reports it
    return ExecuteResponse(output=output, exit_code=code, truncated=truncated)
