"""SkillsvcBackend against the real binary: every BackendProtocol method,
sync and async, with the protocol's result types and error literals, on
skillsvc's own mounts (test_deepagents_contract.py holds it to deepagents'
backend tests)."""

from __future__ import annotations

import base64
import uuid

import pytest
from deepagents.backends.protocol import (
    DeleteResult,
    EditResult,
    FileDownloadResponse,
    FileUploadResponse,
    GlobResult,
    GrepMatch,
    GrepResult,
    LsResult,
    ReadResult,
    WriteResult,
)

from skillsvc import Client
from skillsvc.deepagents import SkillsvcBackend, skill_sources


@pytest.fixture
def backend(skillsvc_env):
    b = SkillsvcBackend(skillsvc_env.grpc_addr, user=skillsvc_env.user, thread="py-be-" + uuid.uuid4().hex[:10])
    yield b
    b.close()


@pytest.fixture
async def abackend(skillsvc_env):
    b = SkillsvcBackend(skillsvc_env.grpc_addr, user=skillsvc_env.user, thread="py-abe-" + uuid.uuid4().hex[:10])
    yield b
    await b.aclose()


def test_sync_methods(backend: SkillsvcBackend) -> None:
    assert backend.write("/workspace/notes.md", "alpha\nbeta\ngamma\n") == WriteResult(path="/workspace/notes.md")
    assert backend.write("/workspace/notes.md", "alpha\nbeta\ngamma\n").error is None, "write overwrites, as the protocol says"
    assert backend.write("/skills/x.md", "no").error == "Error writing file '/skills/x.md': permission denied: /skills is mounted read-only"

    r = backend.read("/workspace/notes.md", offset=1, limit=1)
    assert isinstance(r, ReadResult) and r.error is None
    assert r.file_data["content"] == "beta\n" and r.file_data["encoding"] == "utf-8"
    assert (r.total_lines, r.start_line, r.end_line, r.next_offset) == (3, 2, 2, 2)
    whole = backend.read("/workspace/notes.md")
    assert whole.file_data["content"] == "alpha\nbeta\ngamma\n" and whole.next_offset is None
    assert backend.read("/workspace/missing.md").error == "File '/workspace/missing.md' not found"
    assert backend.read("/workspace/notes.md", offset=10).error == "Line offset 10 exceeds file length (3 lines)"
    assert backend.read("/workspace").error == "File '/workspace' not found"  # a directory is no file, as FilesystemBackend says
    assert backend.read("/workspace/notes.md", limit=0).no_lines_requested
    assert backend.read("/workspace/notes.md", offset=10, limit=0).no_lines_requested  # limit is looked at before offset

    assert backend.edit("/workspace/notes.md", "beta", "BETA") == EditResult(path="/workspace/notes.md", occurrences=1)
    assert backend.edit("/workspace/notes.md", "a", "A", replace_all=True).occurrences == 4
    assert backend.edit("/workspace/notes.md", "absent", "x").error == "Error: String not found in file: 'absent'"
    assert backend.edit("/workspace/notes.md", "", "x").error.startswith("Error: old_string cannot be empty")
    assert backend.edit("/workspace/notes.md", "BETA", "BETA") == EditResult(path="/workspace/notes.md", occurrences=1)
    assert backend.edit("/workspace/none.md", "a", "b").error == "Error: File '/workspace/none.md' not found"

    ls = backend.ls("/workspace")
    assert isinstance(ls, LsResult)
    assert [(e["path"], e["is_dir"]) for e in ls.entries] == [("/workspace/notes.md", False)]
    assert ls.entries[0]["size"] == len("AlphA\nBETA\ngAmmA\n") and ls.entries[0]["modified_at"]
    assert [e["path"] for e in backend.ls("/skills").entries] == ["/skills/data/", "/skills/writing/"]
    assert backend.ls("/nowhere").error == "Path '/nowhere': path_not_found"

    g = backend.glob("*.md", path="/skills/writing")  # no "/": base name at any depth
    assert isinstance(g, GlobResult)
    assert [m["path"] for m in g.matches] == [
        "/skills/writing/commit-message/SKILL.md",
        "/skills/writing/release-notes/SKILL.md",
        "/skills/writing/release-notes/references/style.md",
    ]
    assert [m["path"] for m in backend.glob("/*/SKILL.md", path="/skills/data").matches] == ["/skills/data/csv-summary/SKILL.md"]

    gr = backend.grep("BETA", path="/workspace")
    assert isinstance(gr, GrepResult)
    assert gr.matches == [{"path": "/workspace/notes.md", "line": 2, "text": "BETA"}]
    assert [m["path"] for m in backend.grep("name:", path="/skills", glob="SKILL.md").matches] == [
        "/skills/data/csv-summary/SKILL.md",
        "/skills/writing/commit-message/SKILL.md",
        "/skills/writing/release-notes/SKILL.md",
    ]
    capped = backend.grep("name:", path="/skills", max_count=1)
    assert len(capped.matches) == 1 and capped.truncated

    png = b"\x89PNG\r\n\x1a\n\x00\xff"
    up = backend.upload_files([("/workspace/logo.png", png), ("/skills/x.png", png), ("/workspace/../x", png)])
    assert [(u.path, u.error) for u in up] == [
        ("/workspace/logo.png", None),
        ("/skills/x.png", "permission_denied"),
        ("/workspace/../x", "invalid_path"),
    ]
    down = backend.download_files(["/workspace/logo.png", "/workspace/none", "/workspace"])
    assert down[0].content == png and down[0].error is None
    assert down[1].error == "file_not_found"
    assert down[2].error == "is_directory"
    binary = backend.read("/workspace/logo.png")
    assert binary.file_data == {"content": base64.standard_b64encode(png).decode(), "encoding": "base64"}

    assert backend.delete("/workspace/logo.png") == DeleteResult(path="/workspace/logo.png")
    assert backend.delete("/workspace/logo.png").error == "Error: File '/workspace/logo.png' not found"


async def test_async_methods(abackend: SkillsvcBackend) -> None:
    b = abackend
    assert (await b.awrite("/workspace/a.md", "one\ntwo\n")).path == "/workspace/a.md"
    assert (await b.aread("/workspace/a.md")).file_data["content"] == "one\ntwo\n"
    assert (await b.aread("/workspace/none.md")).error == "File '/workspace/none.md' not found"
    assert (await b.aedit("/workspace/a.md", "two", "2")).occurrences == 1
    assert [e["path"] for e in (await b.als("/workspace")).entries] == ["/workspace/a.md"]
    assert [m["path"] for m in (await b.aglob("*.md", "/workspace")).matches] == ["/workspace/a.md"]
    assert (await b.agrep("2", "/workspace")).matches[0]["line"] == 2
    up = await b.aupload_files([("/workspace/b.bin", b"\x00\x01"), ("/skills/b.bin", b"x")])
    assert [u.error for u in up] == [None, "permission_denied"]
    down = await b.adownload_files(["/workspace/b.bin", "/workspace/zzz"])
    assert (down[0].content, down[1].error) == (b"\x00\x01", "file_not_found")
    assert (await b.aread("/workspace/b.bin")).error.startswith("Error reading file '/workspace/b.bin': binary file")  # as a failed decode
    assert (await b.adelete("/workspace/b.bin")).path == "/workspace/b.bin"
    assert (await b.adelete("/workspace/b.bin")).error


def test_thread_from_langgraph_config(skillsvc_env) -> None:
    from langchain_core.runnables import RunnableLambda

    backend = SkillsvcBackend(skillsvc_env.grpc_addr, user=skillsvc_env.user)
    write = RunnableLambda(lambda text: backend.write("/workspace/who.md", text))
    t1, t2 = "py-cfg-" + uuid.uuid4().hex[:8], "py-cfg-" + uuid.uuid4().hex[:8]
    write.invoke("first", {"configurable": {"thread_id": t1}})
    write.invoke("second", {"configurable": {"thread_id": t2}})
    with Client(skillsvc_env.grpc_addr, user=skillsvc_env.user, thread=t1) as c:
        assert c.read("/workspace/who.md").content == "first"
        assert c.with_identity(thread=t2).read("/workspace/who.md").content == "second"
    with pytest.raises(RuntimeError, match="no thread"):
        backend.ls("/workspace")
    backend.close()


def test_skill_sources(backend: SkillsvcBackend) -> None:
    assert skill_sources(backend) == ["/skills/data/", "/skills/writing/"]


def test_edit_keeps_a_crlf_file_crlf(backend: SkillsvcBackend) -> None:
    """LF strings (what read shows) edit a CRLF file in its own line breaks,
    as deepagents' sandbox edit does (its #2880); the file stays CRLF."""
    assert backend.upload_files([("/workspace/win.txt", b"a\r\nb\r\nc\r\n")])[0].error is None
    assert backend.read("/workspace/win.txt").file_data["content"] == "a\nb\nc\n"
    assert backend.edit("/workspace/win.txt", "a\nb\n", "x\ny\n") == EditResult(path="/workspace/win.txt", occurrences=1)
    assert backend.download_files(["/workspace/win.txt"])[0].content == b"x\r\ny\r\nc\r\n"
    assert backend.edit("/workspace/win.txt", "y", "z\nw") == EditResult(path="/workspace/win.txt", occurrences=1)
    assert backend.edit("/workspace/win.txt", "q\n", "r").error == "Error: String not found in file: 'q\n'"


def test_edit_hints(backend: SkillsvcBackend) -> None:
    """A refused edit is answered in deepagents' words, from the file."""
    backend.write("/workspace/m.md", "role\nrole\nyou are")
    assert backend.edit("/workspace/m.md", "role", "x").error.startswith("Error: String 'role' appears 2 times in file.")
    hint = backend.edit("/workspace/m.md", "you are\n", "x").error
    assert hint.startswith("Error: old_string ends with a newline, but the file does not end with a newline.")
    backend.write("/workspace/two.md", "x y x")
    assert "would appear 2 times" in backend.edit("/workspace/two.md", "x\n", "y").error
    backend.upload_files([("/workspace/bin.dat", b"\x00\x01")])
    assert backend.edit("/workspace/bin.dat", "a", "b").error == "Error: Cannot edit binary files with text replacements."


def _paths(infos) -> list[str]:
    return [i["path"] for i in infos or []]


def test_artifacts_live_in_the_workspace(backend: SkillsvcBackend) -> None:
    """deepagents' middleware writes its folders at the root, where skillsvc
    has only mounts: the backend keeps them in the thread's /workspace, and
    answers by the names the caller used."""
    b = backend
    assert b.write("/large_tool_results/call_1", "big\nresult\n") == WriteResult(path="/large_tool_results/call_1")
    assert b.read("/large_tool_results/call_1").file_data["content"] == "big\nresult\n"
    assert b.read("/workspace/large_tool_results/call_1").file_data["content"] == "big\nresult\n"
    assert b.read("//large_tool_results//call_1").file_data["content"] == "big\nresult\n"
    assert b.edit("/large_tool_results/call_1", "big", "large") == EditResult(path="/large_tool_results/call_1", occurrences=1)
    assert b.upload_files([("/blobs/ab12", b"\x89PNG\x00")])[0] == FileUploadResponse(path="/blobs/ab12")
    assert b.download_files(["/blobs/ab12", "/workspace/blobs/ab12"]) == [
        FileDownloadResponse(path="/blobs/ab12", content=b"\x89PNG\x00"),
        FileDownloadResponse(path="/workspace/blobs/ab12", content=b"\x89PNG\x00"),
    ]
    assert b.write("/conversation_history/s1.md", "## Summarized\n").error is None

    # Asked by its root name, a folder lists, globs and greps by that name;
    # asked through /workspace, by the stored one.
    assert _paths(b.ls("/large_tool_results/").entries) == ["/large_tool_results/call_1"]
    assert _paths(b.ls("/conversation_history").entries) == ["/conversation_history/s1.md"]
    assert {"/workspace/blobs/", "/workspace/conversation_history/", "/workspace/large_tool_results/"} <= set(_paths(b.ls("/workspace").entries))
    assert _paths(b.glob("*", path="/large_tool_results").matches) == ["/large_tool_results/call_1"]
    assert _paths(b.glob("**/call_1", path="/workspace").matches) == ["/workspace/large_tool_results/call_1"]
    assert b.grep("large", path="/large_tool_results/").matches == [GrepMatch(path="/large_tool_results/call_1", line=1, text="large")]
    assert b.grep("large", path="/large_tool_results/call_1").matches == [GrepMatch(path="/large_tool_results/call_1", line=1, text="large")]
    assert b.grep("Summarized", path="/workspace").matches == [GrepMatch(path="/workspace/conversation_history/s1.md", line=1, text="## Summarized")]

    # Messages name the path as asked; only the folders themselves move.
    assert b.read("/large_tool_results/missing").error == "File '/large_tool_results/missing' not found"
    assert b.ls("/blobs/none").error == "Path '/blobs/none': path_not_found"
    assert b.write("/large_tool_results_x", "no").error.startswith("Error writing file '/large_tool_results_x': ")
    assert b.delete("/large_tool_results") == DeleteResult(path="/large_tool_results")
    assert b.read("/workspace/large_tool_results/call_1").error == "File '/workspace/large_tool_results/call_1' not found"


async def test_async_artifacts_live_in_the_workspace(abackend: SkillsvcBackend) -> None:
    b = abackend
    assert await b.awrite("/large_tool_results/call_2", "x\n") == WriteResult(path="/large_tool_results/call_2")
    assert (await b.aread("/workspace/large_tool_results/call_2")).file_data["content"] == "x\n"
    assert _paths((await b.als("/large_tool_results")).entries) == ["/large_tool_results/call_2"]
    assert _paths((await b.aglob("call_*", path="/large_tool_results/")).matches) == ["/large_tool_results/call_2"]
    assert (await b.agrep("x", path="/large_tool_results")).matches == [GrepMatch(path="/large_tool_results/call_2", line=1, text="x")]
    assert (await b.aupload_files([("/blobs/cd34", b"\x00")]))[0] == FileUploadResponse(path="/blobs/cd34")
    assert (await b.adownload_files(["/workspace/blobs/cd34"]))[0].content == b"\x00"


def test_artifacts_folder(skillsvc_env) -> None:
    """artifacts names the folder; None (or "/") passes the paths on as they
    are, so on skillsvc, which has no such mount, the middleware's writes
    fail and it keeps the result in the message."""
    from deepagents.middleware.filesystem import FilesystemMiddleware
    from langchain_core.messages import ToolMessage

    thread = "py-art-" + uuid.uuid4().hex[:8]
    b = SkillsvcBackend(skillsvc_env.grpc_addr, user=skillsvc_env.user, thread=thread, artifacts="/workspace/agent/")
    assert b.write("/blobs/x", "y").error is None
    assert b.read("/workspace/agent/blobs/x").file_data["content"] == "y"
    b.close()
    for folder in (None, "/"):
        b = SkillsvcBackend(skillsvc_env.grpc_addr, user=skillsvc_env.user, thread=thread, artifacts=folder)
        assert b.write("/large_tool_results/x", "y").error.startswith("Error writing file '/large_tool_results/x': ")
        assert b.read("/workspace/large_tool_results/x").error == "File '/workspace/large_tool_results/x' not found"
        msg = ToolMessage(content="y" * 5000, tool_call_id="big")
        assert FilesystemMiddleware(backend=b, tool_token_limit_before_evict=1000)._intercept_large_tool_result(msg).content == "y" * 5000
        b.close()
    for folder in ("workspace", "", 7):
        with pytest.raises(ValueError, match="artifacts must be an absolute folder"):
            SkillsvcBackend(skillsvc_env.grpc_addr, user=skillsvc_env.user, thread=thread, artifacts=folder)
