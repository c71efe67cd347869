"""Client and AsyncClient: every RPC of skillsvc's three services.

A client is bound to a target and an identity (user, thread, optional
ticket; or a bearer token in jwt mode). Methods take keyword arguments named
as in the protos and return the response messages (``skillsvc.v1.*_pb2``);
paged listings and streams have iterators, files have download/upload
helpers, and a failed call raises a ``SkillsvcError`` subclass keeping the
gRPC code. Read-only calls are retried on UNAVAILABLE by gRPC's own retry
policy (a service config), never writes.

``AsyncClient`` has the same methods on grpc.aio; each returns an awaitable
(the iterators are async iterators).
"""

from __future__ import annotations

import asyncio
import copy
import json
import os
import tempfile
import time
from collections.abc import AsyncIterator, Callable, Iterable, Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, BinaryIO

import grpc
import grpc.aio

from .archive import MAX_ARCHIVE_BYTES, download_limit, extract_skill
from .errors import ResourceExhausted, from_rpc_error
from .runner import Materialized, RunResult, amaterialize, arun_script, materialize, run_script
from .skillset import MaterializedSet, amaterialize_skills, materialize_skills
from .v1 import admin_pb2, admin_pb2_grpc, filesystem_pb2, filesystem_pb2_grpc, skills_pb2, skills_pb2_grpc

DEFAULT_TARGET = "127.0.0.1:7070"
CHUNK_SIZE = 256 << 10
# WATCH_RETRIES bounds the reconnections of watch_skills in a row.
WATCH_RETRIES = 5
# The server caps messages at 16 MiB; replies to Read and ExportSkill
# chunks stay below it.
_MAX_MESSAGE = 16 << 20
# The longest query the server takes by default (--skills.max-query-bytes):
# a task or message handed to FormatSkills is cut to it (bounded_query).
MAX_QUERY_BYTES = 4096

# Calls that change nothing: safe to retry when the server is unavailable.
_READ_ONLY = {
    "skillsvc.v1.FilesystemService": ["List", "Stat", "Read", "Download", "Glob", "Grep"],
    "skillsvc.v1.SkillsService": [
        "ListCategories",
        "ListSkills",
        "FormatSkills",
        "GetSkill",
        "RenderSkill",
        "ReadSkillFile",
        "SearchSkills",
        "ExportSkill",
    ],
}

_SERVICE_CONFIG = json.dumps(
    {
        "methodConfig": [
            {
                "name": [{"service": svc, "method": m} for svc, methods in _READ_ONLY.items() for m in methods],
                "retryPolicy": {
                    "maxAttempts": 4,
                    "initialBackoff": "0.1s",
                    "maxBackoff": "2s",
                    "backoffMultiplier": 2,
                    "retryableStatusCodes": ["UNAVAILABLE"],
                },
            }
        ]
    }
)

Token = str | Callable[[], str]

#: Where a served skill comes from (``skillsvc.v1.Provenance``): ``version``
#: (the live copy's manifest digest; "" for a skill uploaded to the bucket
#: directly, then ``out_of_band``), ``publisher``, ``approver``,
#: ``scan_verdict`` ("clean", "low", "medium", "high" or "unscanned"),
#: ``signature`` ("unsigned", "verified" or "invalid") and
#: ``signature_key``. get_skill always sets it; list_skills and
#: search_skills with include_provenance.
Provenance = skills_pb2.Provenance


def trust_line(p: Provenance) -> str:
    """A provenance as one short line for a model or a log, worded as the
    TypeScript client's trustLine, such as ``Trust: signature verified by
    release, scan clean, published by alice.`` or ``Trust: signature
    unsigned, scan unscanned, uploaded to the library directly (no
    published version).``"""
    sig = p.signature or "unsigned"
    if p.signature_key:
        sig += f" by {p.signature_key}"
    if p.out_of_band or not p.version:
        origin = "uploaded to the library directly (no published version)"
    else:
        origin = f"published by {p.publisher or 'unknown'}"
        if p.approver:
            origin += f", approved by {p.approver}"
    return f"Trust: signature {sig}, scan {p.scan_verdict or 'unscanned'}, {origin}."


@dataclass(frozen=True)
class Identity:
    """Who is calling: sent as metadata with every call.

    In insecure mode that is user and thread (and ticket); in jwt mode a
    bearer token, given as a string or as a function returning a fresh one.
    ``pin_library`` asks that every call read the library the thread pinned
    on its first such call (header ``x-skillsvc-pin: library``; see the
    docs/agents/pins.md). ``teams`` (comma-separated team IDs, header
    ``x-skillsvc-teams``) are the teams whose libraries the caller reads, in
    insecure mode; in jwt mode the token names them. ``scope`` (header
    ``x-skillsvc-scope``) is the named skill set every listing shows unless
    a call names another, and ``harness`` (``x-skillsvc-harness``) the agent
    harness the caller runs in, which skills' ``compatibility`` is matched
    against; in jwt mode the token's claims decide both.
    """

    user: str | None = None
    thread: str | None = None
    ticket: str | None = None
    token: Token | None = None
    pin_library: bool = False
    teams: str | None = None
    scope: str | None = None
    harness: str | None = None

    def metadata(self) -> list[tuple[str, str]]:
        md = []
        if self.token is not None:
            token = self.token() if callable(self.token) else self.token
            md.append(("authorization", f"Bearer {token}"))
        for key, value in (
            ("x-skillsvc-user", self.user),
            ("x-skillsvc-thread", self.thread),
            ("x-skillsvc-ticket", self.ticket),
            ("x-skillsvc-teams", self.teams),
            ("x-skillsvc-scope", self.scope),
            ("x-skillsvc-harness", self.harness),
        ):
            if value:
                md.append((key, value))
        if self.pin_library:
            md.append(("x-skillsvc-pin", "library"))
        return md


def bounded_query(text: str, max_bytes: int = MAX_QUERY_BYTES) -> str:
    """text cut to at most max_bytes of UTF-8, on a character boundary, so
    a long message still makes a query the server takes (its start, which
    usually states the task)."""
    data = text.encode("utf-8")
    if len(data) <= max_bytes:
        return text
    return data[: max(max_bytes, 0)].decode("utf-8", "ignore")


def channel_options() -> list[tuple[str, Any]]:
    return [
        ("grpc.service_config", _SERVICE_CONFIG),
        ("grpc.enable_retries", 1),
        ("grpc.max_receive_message_length", _MAX_MESSAGE),
        ("grpc.max_send_message_length", _MAX_MESSAGE),
    ]


def channel_credentials(
    tls: bool | grpc.ChannelCredentials,
    root_certificates: bytes | None,
    private_key: bytes | None,
    certificate_chain: bytes | None,
) -> grpc.ChannelCredentials | None:
    """TLS credentials for the channel, or None for plaintext."""
    if isinstance(tls, grpc.ChannelCredentials):
        return tls
    if tls or root_certificates or certificate_chain:
        return grpc.ssl_channel_credentials(root_certificates, private_key, certificate_chain)
    return None


class _Methods:
    """The unary RPCs, shared by Client and AsyncClient: each builds the
    request and hands it to ``_unary``, which is synchronous on Client and a
    coroutine on AsyncClient."""

    _fs: Any
    _skills: Any
    _admin: Any

    def _unary(self, stub: Any, method: str, request: Any, timeout: float | None) -> Any:
        raise NotImplementedError

    # FilesystemService

    def list(self, path: str, *, page_size: int = 0, page_token: str = "", timeout: float | None = None) -> filesystem_pb2.ListResponse:
        """One page of a directory; ``iter_list`` follows the pages."""
        return self._unary(self._fs, "List", filesystem_pb2.ListRequest(path=path, page_size=page_size, page_token=page_token), timeout)

    def stat(self, path: str, *, timeout: float | None = None) -> filesystem_pb2.StatResponse:
        return self._unary(self._fs, "Stat", filesystem_pb2.StatRequest(path=path), timeout)

    def read(
        self, path: str, *, offset: int = 0, limit: int = 0, line_numbers: bool = False, timeout: float | None = None
    ) -> filesystem_pb2.ReadResponse:
        """Lines of a text file: offset is 0-based, limit 0 means 2000."""
        req = filesystem_pb2.ReadRequest(path=path, offset=offset, limit=limit, line_numbers=line_numbers)
        return self._unary(self._fs, "Read", req, timeout)

    def write(
        self, path: str, content: str, *, if_match: str = "", must_not_exist: bool = False, timeout: float | None = None
    ) -> filesystem_pb2.WriteResponse:
        """Writes a text file atomically; if_match/must_not_exist make it conditional."""
        req = filesystem_pb2.WriteRequest(path=path, content=content, if_match=if_match, must_not_exist=must_not_exist)
        return self._unary(self._fs, "Write", req, timeout)

    def edit(
        self, path: str, old_string: str, new_string: str, *, replace_all: bool = False, timeout: float | None = None
    ) -> filesystem_pb2.EditResponse:
        """Replaces exact text; concurrent edits never lose an update."""
        req = filesystem_pb2.EditRequest(path=path, old_string=old_string, new_string=new_string, replace_all=replace_all)
        return self._unary(self._fs, "Edit", req, timeout)

    def delete(self, path: str, *, recursive: bool = False, timeout: float | None = None) -> filesystem_pb2.DeleteResponse:
        return self._unary(self._fs, "Delete", filesystem_pb2.DeleteRequest(path=path, recursive=recursive), timeout)

    def glob(
        self,
        pattern: str,
        *,
        path: str = "",
        max_results: int = 0,
        hidden: int = filesystem_pb2.GLOB_HIDDEN_UNSPECIFIED,
        match_base_name: bool = False,
        timeout: float | None = None,
    ) -> filesystem_pb2.GlobResponse:
        """Files matching a pattern. ``hidden``: GLOB_HIDDEN_INCLUDE (the
        default) or GLOB_HIDDEN_EXPLICIT (names starting with "." only where
        the pattern names them); ``match_base_name`` matches a pattern
        without "/" against base names at any depth."""
        req = filesystem_pb2.GlobRequest(pattern=pattern, path=path, max_results=max_results, hidden=hidden, match_base_name=match_base_name)
        return self._unary(self._fs, "Glob", req, timeout)

    def grep(
        self,
        pattern: str,
        *,
        path: str = "",
        glob: str = "",
        regex: bool = False,
        case_insensitive: bool = False,
        max_matches: int = 0,
        timeout: float | None = None,
    ) -> filesystem_pb2.GrepResponse:
        req = filesystem_pb2.GrepRequest(
            pattern=pattern, path=path, glob=glob, regex=regex, case_insensitive=case_insensitive, max_matches=max_matches
        )
        return self._unary(self._fs, "Grep", req, timeout)

    # SkillsService

    def list_categories(self, *, timeout: float | None = None) -> skills_pb2.ListCategoriesResponse:
        return self._unary(self._skills, "ListCategories", skills_pb2.ListCategoriesRequest(), timeout)

    def list_skills(
        self,
        *,
        category: str | None = None,
        page_size: int = 0,
        page_token: str = "",
        include_invalid: bool = False,
        include_disabled: bool = False,
        scope: str = "",
        include_provenance: bool = False,
        view: int = skills_pb2.SKILL_VIEW_UNSPECIFIED,
        timeout: float | None = None,
    ) -> skills_pb2.ListSkillsResponse:
        """One page of skills; ``iter_skills`` follows the pages. category
        None lists all, "" the skills outside any category. scope names a
        skill set to list only its skills ("": the identity's scope, if any).
        With include_provenance each skill's ``provenance`` (a
        ``Provenance``: version, publisher, approver, scan verdict, signature)
        is set; without it the field is unset (``HasField("provenance")`` is
        False), as the lookup costs a cached read per library. view
        SKILL_VIEW_FULL adds each skill's manifest and metadata."""
        req = skills_pb2.ListSkillsRequest(
            page_size=page_size,
            page_token=page_token,
            include_invalid=include_invalid,
            include_disabled=include_disabled,
            scope=scope,
            include_provenance=include_provenance,
            view=view,  # type: ignore[arg-type]
        )
        if category is not None:
            req.category = category
        return self._unary(self._skills, "ListSkills", req, timeout)

    def format_skills(
        self,
        *,
        category: str | None = None,
        char_budget: int = 0,
        max_skills: int = 0,
        format: str = "",
        group_by_category: bool = False,
        search_tool: str = "",
        query: str = "",
        scope: str = "",
        timeout: float | None = None,
    ) -> skills_pb2.FormatSkillsResponse:
        """The skills as a system-prompt block within char_budget characters.
        With query (the task or the user's latest message, at most the
        server's --skills.max-query-bytes: see ``bounded_query``) the block
        holds the skills most relevant to it, best first; scope names a
        skill set ("": the identity's scope, if any)."""
        req = skills_pb2.FormatSkillsRequest(
            char_budget=char_budget,
            max_skills=max_skills,
            format=format,
            group_by_category=group_by_category,
            search_tool=search_tool,
            query=query,
            scope=scope,
        )
        if category is not None:
            req.category = category
        return self._unary(self._skills, "FormatSkills", req, timeout)

    # version, where a method takes it, names a published version of the
    # skill (an id, a unique prefix of one, or a label such as "production");
    # empty is the live skill.

    def get_skill(self, path: str, *, version: str = "", timeout: float | None = None) -> skills_pb2.GetSkillResponse:
        """The skill: its summary, SKILL.md, files and, always, its
        ``provenance``."""
        return self._unary(self._skills, "GetSkill", skills_pb2.GetSkillRequest(path=path, version=version), timeout)

    def render_skill(
        self, path: str, *, arguments: str = "", base_dir: str = "", version: str = "", timeout: float | None = None
    ) -> skills_pb2.RenderSkillResponse:
        """The text to hand the model when the skill is invoked."""
        req = skills_pb2.RenderSkillRequest(path=path, arguments=arguments, base_dir=base_dir, version=version)
        return self._unary(self._skills, "RenderSkill", req, timeout)

    def read_skill_file(
        self, path: str, file: str, *, download_tool: str = "", version: str = "", timeout: float | None = None
    ) -> skills_pb2.ReadSkillFileResponse:
        req = skills_pb2.ReadSkillFileRequest(path=path, file=file, download_tool=download_tool, version=version)
        return self._unary(self._skills, "ReadSkillFile", req, timeout)

    def search_skills(
        self,
        query: str,
        *,
        limit: int = 0,
        category: str | None = None,
        min_relevance: float = 0,
        scope: str = "",
        include_provenance: bool = False,
        timeout: float | None = None,
    ) -> skills_pb2.SearchSkillsResponse:
        """The skills most relevant to query, best first (``results``, each a
        ScoredSkill). include_provenance sets each result's
        ``skill.provenance``, as in ``list_skills``."""
        req = skills_pb2.SearchSkillsRequest(
            query=query, limit=limit, min_relevance=min_relevance, scope=scope, include_provenance=include_provenance
        )
        if category is not None:
            req.category = category
        return self._unary(self._skills, "SearchSkills", req, timeout)

    def set_skill_enabled(self, path: str, enabled: bool, *, timeout: float | None = None) -> skills_pb2.SetSkillEnabledResponse:
        req = skills_pb2.SetSkillEnabledRequest(path=path, enabled=enabled)
        return self._unary(self._skills, "SetSkillEnabled", req, timeout)

    # AdminService (operators: an admin token in jwt mode)

    def drop_skill_index(self, *, user: str = "", shared: bool = False, team: str = "", timeout: float | None = None) -> admin_pb2.DropSkillIndexResponse:
        return self._unary(self._admin, "DropSkillIndex", admin_pb2.DropSkillIndexRequest(user=user, shared=shared, team=team), timeout)

    def set_skill_protected(
        self, name: str, protected: bool = True, *, shared: bool = False, team: str = "", timeout: float | None = None
    ) -> admin_pb2.SetSkillProtectedResponse:
        """Protects (or no longer protects) a skill name of the shared library or a team's."""
        req = admin_pb2.SetSkillProtectedRequest(library=admin_pb2.LibraryRef(shared=shared, team=team), name=name, protected=protected)
        return self._unary(self._admin, "SetSkillProtected", req, timeout)

    def list_protected_skills(self, *, shared: bool = False, team: str = "", timeout: float | None = None) -> admin_pb2.ListProtectedSkillsResponse:
        req = admin_pb2.ListProtectedSkillsRequest(library=admin_pb2.LibraryRef(shared=shared, team=team))
        return self._unary(self._admin, "ListProtectedSkills", req, timeout)

    def set_skill_scope(
        self, scope: admin_pb2.SkillScope, *, user: str = "", shared: bool = False, team: str = "", timeout: float | None = None
    ) -> admin_pb2.SetSkillScopeResponse:
        """Defines (or redefines, by name) a scope of a user's, a team's or the
        shared library: a named skill set that calls choose with scope=."""
        req = admin_pb2.SetSkillScopeRequest(library=admin_pb2.LibraryRef(user=user, shared=shared, team=team), scope=scope)
        return self._unary(self._admin, "SetSkillScope", req, timeout)

    def delete_skill_scope(
        self, name: str, *, user: str = "", shared: bool = False, team: str = "", timeout: float | None = None
    ) -> admin_pb2.DeleteSkillScopeResponse:
        req = admin_pb2.DeleteSkillScopeRequest(library=admin_pb2.LibraryRef(user=user, shared=shared, team=team), name=name)
        return self._unary(self._admin, "DeleteSkillScope", req, timeout)

    def list_skill_scopes(self, *, user: str = "", shared: bool = False, team: str = "", timeout: float | None = None) -> admin_pb2.ListSkillScopesResponse:
        req = admin_pb2.ListSkillScopesRequest(library=admin_pb2.LibraryRef(user=user, shared=shared, team=team))
        return self._unary(self._admin, "ListSkillScopes", req, timeout)

    def set_user_skill_enabled(self, user: str, path: str, enabled: bool, *, timeout: float | None = None) -> admin_pb2.SetUserSkillEnabledResponse:
        req = admin_pb2.SetUserSkillEnabledRequest(user=user, path=path, enabled=enabled)
        return self._unary(self._admin, "SetUserSkillEnabled", req, timeout)

    def put_library_file(
        self,
        path: str,
        data: bytes,
        *,
        user: str = "",
        shared: bool = False,
        team: str = "",
        if_match: str = "",
        must_not_exist: bool = False,
        mode: int = 0,
        timeout: float | None = None,
    ) -> admin_pb2.PutLibraryFileResponse:
        """Stores a file in a user's, a team's (or the shared) library, path relative to it.

        ``mode`` (``0o755`` or ``0o644``; only the executable bit counts) is recorded with the file and served in
        manifests and exports; 0 records none (the file is then ``0o644`` unless it starts with ``#!``)."""
        req = admin_pb2.PutLibraryFileRequest(
            library=admin_pb2.LibraryRef(user=user, shared=shared, team=team),
            path=path,
            data=data,
            if_match=if_match,
            must_not_exist=must_not_exist,
            mode=mode,
        )
        return self._unary(self._admin, "PutLibraryFile", req, timeout)

    def delete_library_file(
        self, path: str, *, user: str = "", shared: bool = False, team: str = "", timeout: float | None = None
    ) -> admin_pb2.DeleteLibraryFileResponse:
        req = admin_pb2.DeleteLibraryFileRequest(library=admin_pb2.LibraryRef(user=user, shared=shared, team=team), path=path)
        return self._unary(self._admin, "DeleteLibraryFile", req, timeout)


class _Base(_Methods):
    """What Client and AsyncClient share: the constructor, which opens the
    channel with the subclass's ``_grpc`` (grpc or grpc.aio), the identity
    and the stubs."""

    _grpc: Any

    def __init__(
        self,
        target: str = DEFAULT_TARGET,
        *,
        user: str | None = None,
        thread: str | None = None,
        ticket: str | None = None,
        token: Token | None = None,
        pin_library: bool = False,
        teams: str | None = None,
        scope: str | None = None,
        harness: str | None = None,
        tls: bool | grpc.ChannelCredentials = False,
        root_certificates: bytes | None = None,
        private_key: bytes | None = None,
        certificate_chain: bytes | None = None,
        timeout: float | None = 30.0,
        options: Iterable[tuple[str, Any]] = (),
    ) -> None:
        creds = channel_credentials(tls, root_certificates, private_key, certificate_chain)
        opts = channel_options() + list(options)
        channel = self._grpc.secure_channel(target, creds, opts) if creds else self._grpc.insecure_channel(target, opts)
        self._channel = channel
        self._owns_channel = True
        self.identity = Identity(user, thread, ticket, token, pin_library, teams, scope, harness)
        self.timeout = timeout
        self._fs = filesystem_pb2_grpc.FilesystemServiceStub(channel)
        self._skills = skills_pb2_grpc.SkillsServiceStub(channel)
        self._admin = admin_pb2_grpc.AdminServiceStub(channel)

    def with_identity(self, **changes: Any) -> Any:
        """A client for another identity (user, thread, ticket, token,
        pin_library, teams, scope, harness) on the same channel; closing it leaves the channel open."""
        other = copy.copy(self)
        other.identity = replace(self.identity, **changes)
        other._owns_channel = False
        return other

    def _call_args(self, timeout: float | None) -> dict[str, Any]:
        return {"timeout": timeout if timeout is not None else self.timeout, "metadata": self.identity.metadata()}


def _upload_requests(path: str, data: bytes | BinaryIO, if_match: str, must_not_exist: bool, chunk_size: int) -> Iterator[filesystem_pb2.UploadRequest]:
    yield filesystem_pb2.UploadRequest(header=filesystem_pb2.UploadHeader(path=path, if_match=if_match, must_not_exist=must_not_exist))
    if isinstance(data, (bytes, bytearray, memoryview)):
        for i in range(0, len(data), chunk_size):
            yield filesystem_pb2.UploadRequest(data=bytes(data[i : i + chunk_size]))
        return
    while chunk := data.read(chunk_size):
        yield filesystem_pb2.UploadRequest(data=chunk)


def _too_large(skill: str, max_bytes: int) -> ResourceExhausted:
    # Refused while downloading, so a stream that never ends fills neither
    # memory nor disk.
    return ResourceExhausted(f"export of {skill!r} is larger than a gzip of max_bytes ({max_bytes} bytes) can be")


class Client(_Base):
    """A synchronous client. Use as a context manager, or call close()."""

    _grpc = grpc

    def close(self) -> None:
        if self._owns_channel:
            self._channel.close()

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _unary(self, stub: Any, method: str, request: Any, timeout: float | None) -> Any:
        try:
            return getattr(stub, method)(request, **self._call_args(timeout))
        except grpc.RpcError as err:
            raise from_rpc_error(err) from None

    def iter_list(self, path: str, *, page_size: int = 0) -> Iterator[filesystem_pb2.FileInfo]:
        """Every entry of a directory, page after page."""
        token = ""
        while True:
            page = self.list(path, page_size=page_size, page_token=token)
            yield from page.entries
            if not (token := page.next_page_token):
                return

    def iter_skills(self, **filters: Any) -> Iterator[skills_pb2.SkillSummary]:
        """Every skill (list_skills' filters), page after page."""
        token = ""
        while True:
            page = self.list_skills(page_token=token, **filters)
            yield from page.skills
            if not (token := page.next_page_token):
                return

    def iter_download(self, path: str, *, offset: int = 0, limit: int = 0, timeout: float | None = None) -> Iterator[bytes]:
        """A file's bytes in chunks, as they arrive."""
        req = filesystem_pb2.DownloadRequest(path=path, offset=offset, limit=limit)
        try:
            for msg in self._fs.Download(req, **self._call_args(timeout)):
                yield msg.data
        except grpc.RpcError as err:
            raise from_rpc_error(err) from None

    def download(self, path: str, *, offset: int = 0, limit: int = 0, timeout: float | None = None) -> bytes:
        return b"".join(self.iter_download(path, offset=offset, limit=limit, timeout=timeout))

    def download_file(self, path: str, local_path: str | os.PathLike[str], *, timeout: float | None = None) -> Path:
        """Downloads to a local file, replacing it only once complete."""
        local = Path(local_path)
        with tempfile.NamedTemporaryFile(dir=local.parent or ".", delete=False) as tmp:
            try:
                for chunk in self.iter_download(path, timeout=timeout):
                    tmp.write(chunk)
            except BaseException:
                os.unlink(tmp.name)
                raise
        os.replace(tmp.name, local)
        return local

    def upload(
        self,
        path: str,
        data: bytes | BinaryIO,
        *,
        if_match: str = "",
        must_not_exist: bool = False,
        chunk_size: int = CHUNK_SIZE,
        timeout: float | None = None,
    ) -> filesystem_pb2.FileInfo:
        """Stores bytes (or a binary file object) at path, streamed in chunks."""
        try:
            resp = self._fs.Upload(_upload_requests(path, data, if_match, must_not_exist, chunk_size), **self._call_args(timeout))
        except grpc.RpcError as err:
            raise from_rpc_error(err) from None
        return resp.info

    def upload_file(self, path: str, local_path: str | os.PathLike[str], **kwargs: Any) -> filesystem_pb2.FileInfo:
        with open(local_path, "rb") as f:
            return self.upload(path, f, **kwargs)

    def watch_skills(self, since: str = "", *, resume: bool = True) -> Iterator[skills_pb2.WatchSkillsResponse]:
        """The changes to the caller's catalog as they happen, one
        WatchSkillsResponse each (its ``library_digest`` is where to resume
        from; ``reset`` means list again). since is a listing's or a
        message's digest. With resume, a dropped stream (UNAVAILABLE, as a
        replica drains) reconnects from the last digest seen, a few times
        in a row at most. It runs until the caller stops iterating."""
        failures = 0
        while True:
            stream = self._skills.WatchSkills(skills_pb2.WatchSkillsRequest(since_digest=since), metadata=self.identity.metadata())
            try:
                for msg in stream:
                    failures = 0
                    since = msg.library_digest or since
                    yield msg
            except grpc.RpcError as err:
                failures += 1
                if not resume or err.code() != grpc.StatusCode.UNAVAILABLE or failures > WATCH_RETRIES:
                    raise from_rpc_error(err) from None
                time.sleep(min(0.2 * 2**failures, 5.0))
            finally:
                stream.cancel()

    def export_skill(
        self,
        skill: str,
        directory: str | os.PathLike[str],
        *,
        version: str = "",
        timeout: float | None = None,
        max_bytes: int = MAX_ARCHIVE_BYTES,
    ) -> Path:
        """Downloads a skill folder (name or path; a published version of it
        with version) into directory, safely (see ``extract_skill``);
        returns the extracted folder."""
        req = skills_pb2.ExportSkillRequest(path=skill, version=version)
        with tempfile.SpooledTemporaryFile(max_size=8 << 20) as archive:
            stream = self._skills.ExportSkill(req, **self._call_args(timeout))
            try:
                for msg in stream:
                    archive.write(msg.data)
                    if archive.tell() > download_limit(max_bytes):
                        stream.cancel()
                        raise _too_large(skill, max_bytes)
            except grpc.RpcError as err:
                raise from_rpc_error(err) from None
            archive.seek(0)
            return extract_skill(archive, directory, max_bytes=max_bytes)  # type: ignore[arg-type]

    def materialize_skill(self, skill: str, *, version: str = "", cache_dir: str | os.PathLike[str] | None = None) -> Materialized:
        """The skill's files in the local cache, verified against its
        manifest; fetched only when not there yet (see skillsvc.runner)."""
        return materialize(self, skill, version=version, cache_dir=cache_dir)

    def materialize_skills(self, **selection: Any) -> MaterializedSet:
        """The skills a listing selects (scope, category, layer, names) as one
        cached directory with a folder per skill, each verified against its
        manifest; nothing is copied for a set already there (options and
        layouts: skillsvc.skillset.materialize_skills)."""
        return materialize_skills(self, **selection)

    def run_skill_script(self, skill: str, script: str, **options: Any) -> RunResult:
        """Runs a skill's script on this machine, sandboxed where bubblewrap
        runs, with the thread's /workspace (options: skillsvc.runner.run_script)."""
        return run_script(self, skill, script, **options)


class AsyncClient(_Base):
    """The same client on grpc.aio: ``await client.read(...)``,
    ``async for skill in client.iter_skills()``."""

    _grpc = grpc.aio

    async def close(self) -> None:
        if self._owns_channel:
            await self._channel.close()

    async def __aenter__(self) -> AsyncClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def _unary(self, stub: Any, method: str, request: Any, timeout: float | None) -> Any:
        try:
            return await getattr(stub, method)(request, **self._call_args(timeout))
        except grpc.aio.AioRpcError as err:
            raise from_rpc_error(err) from None

    async def iter_list(self, path: str, *, page_size: int = 0) -> AsyncIterator[filesystem_pb2.FileInfo]:
        token = ""
        while True:
            page = await self.list(path, page_size=page_size, page_token=token)
            for entry in page.entries:
                yield entry
            if not (token := page.next_page_token):
                return

    async def iter_skills(self, **filters: Any) -> AsyncIterator[skills_pb2.SkillSummary]:
        token = ""
        while True:
            page = await self.list_skills(page_token=token, **filters)
            for skill in page.skills:
                yield skill
            if not (token := page.next_page_token):
                return

    async def iter_download(self, path: str, *, offset: int = 0, limit: int = 0, timeout: float | None = None) -> AsyncIterator[bytes]:
        req = filesystem_pb2.DownloadRequest(path=path, offset=offset, limit=limit)
        try:
            async for msg in self._fs.Download(req, **self._call_args(timeout)):
                yield msg.data
        except grpc.aio.AioRpcError as err:
            raise from_rpc_error(err) from None

    async def download(self, path: str, *, offset: int = 0, limit: int = 0, timeout: float | None = None) -> bytes:
        return b"".join([chunk async for chunk in self.iter_download(path, offset=offset, limit=limit, timeout=timeout)])

    async def download_file(self, path: str, local_path: str | os.PathLike[str], *, timeout: float | None = None) -> Path:
        local = Path(local_path)
        with tempfile.NamedTemporaryFile(dir=local.parent or ".", delete=False) as tmp:
            try:
                async for chunk in self.iter_download(path, timeout=timeout):
                    tmp.write(chunk)
            except BaseException:
                os.unlink(tmp.name)
                raise
        os.replace(tmp.name, local)
        return local

    async def upload(
        self,
        path: str,
        data: bytes | BinaryIO,
        *,
        if_match: str = "",
        must_not_exist: bool = False,
        chunk_size: int = CHUNK_SIZE,
        timeout: float | None = None,
    ) -> filesystem_pb2.FileInfo:
        try:
            resp = await self._fs.Upload(_upload_requests(path, data, if_match, must_not_exist, chunk_size), **self._call_args(timeout))
        except grpc.aio.AioRpcError as err:
            raise from_rpc_error(err) from None
        return resp.info

    async def upload_file(self, path: str, local_path: str | os.PathLike[str], **kwargs: Any) -> filesystem_pb2.FileInfo:
        with open(local_path, "rb") as f:
            return await self.upload(path, f, **kwargs)

    async def watch_skills(self, since: str = "", *, resume: bool = True) -> AsyncIterator[skills_pb2.WatchSkillsResponse]:
        """Client.watch_skills on grpc.aio: ``async for msg in ...``."""
        failures = 0
        while True:
            stream = self._skills.WatchSkills(skills_pb2.WatchSkillsRequest(since_digest=since), metadata=self.identity.metadata())
            try:
                async for msg in stream:
                    failures = 0
                    since = msg.library_digest or since
                    yield msg
            except grpc.aio.AioRpcError as err:
                failures += 1
                if not resume or err.code() != grpc.StatusCode.UNAVAILABLE or failures > WATCH_RETRIES:
                    raise from_rpc_error(err) from None
                await asyncio.sleep(min(0.2 * 2**failures, 5.0))
            finally:
                stream.cancel()

    async def export_skill(
        self,
        skill: str,
        directory: str | os.PathLike[str],
        *,
        version: str = "",
        timeout: float | None = None,
        max_bytes: int = MAX_ARCHIVE_BYTES,
    ) -> Path:
        req = skills_pb2.ExportSkillRequest(path=skill, version=version)
        with tempfile.SpooledTemporaryFile(max_size=8 << 20) as archive:
            stream = self._skills.ExportSkill(req, **self._call_args(timeout))
            try:
                async for msg in stream:
                    archive.write(msg.data)
                    if archive.tell() > download_limit(max_bytes):
                        stream.cancel()
                        raise _too_large(skill, max_bytes)
            except grpc.aio.AioRpcError as err:
                raise from_rpc_error(err) from None
            archive.seek(0)
            return extract_skill(archive, directory, max_bytes=max_bytes)  # type: ignore[arg-type]

    async def materialize_skill(self, skill: str, *, version: str = "", cache_dir: str | os.PathLike[str] | None = None) -> Materialized:
        """Client.materialize_skill, in a worker thread."""
        return await amaterialize(self, skill, version=version, cache_dir=cache_dir)

    async def materialize_skills(self, **selection: Any) -> MaterializedSet:
        """Client.materialize_skills, in a worker thread whose calls run on this loop."""
        return await amaterialize_skills(self, **selection)

    async def run_skill_script(self, skill: str, script: str, **options: Any) -> RunResult:
        """Client.run_skill_script, in a worker thread whose calls run on this loop."""
        return await arun_script(self, skill, script, **options)


__all__ = [
    "DEFAULT_TARGET",
    "MAX_QUERY_BYTES",
    "AsyncClient",
    "Client",
    "Identity",
    "Provenance",
    "bounded_query",
    "extract_skill",
    "trust_line",
]
