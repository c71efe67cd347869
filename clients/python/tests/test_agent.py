"""A Deep Agents agent on SkillsvcBackend, driven by a scripted model: it
finds the skills in its prompt, loads one by reading its SKILL.md, lists,
reads, writes and edits files, and reads back what the middleware offloaded,
all in the real service."""

from __future__ import annotations

import uuid

from deepagents import create_deep_agent
from deepagents.middleware.summarization import SummarizationMiddleware
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langchain_core.tools import tool

from skillsvc import Client
from skillsvc.deepagents import SkillsvcBackend, skill_sources
from skillsvc.testing_models import ScriptedChatModel, script, tool_call


def _turns() -> list[AIMessage | str]:
    return [
        tool_call("ls", "c1", path="/skills/writing"),
        tool_call("read_file", "c2", file_path="/skills/writing/release-notes/SKILL.md"),
        tool_call("read_file", "c3", file_path="/skills/writing/release-notes/references/style.md"),
        tool_call("write_file", "c4", file_path="/workspace/RELEASE_NOTES.md", content="## Added\n- Export skills\n"),
        tool_call("edit_file", "c5", file_path="/workspace/RELEASE_NOTES.md", old_string="Export skills", new_string="Export skills as tar.gz"),
        tool_call("read_file", "c6", file_path="/workspace/RELEASE_NOTES.md"),
        AIMessage(content="Release notes written to /workspace/RELEASE_NOTES.md."),
    ]


def _check(model: ScriptedChatModel, result: dict, env, thread: str) -> None:
    # The skills middleware put the library into the system prompt.
    system = model.seen[0][0].text
    for name in ("release-notes", "commit-message", "csv-summary"):
        assert name in system, f"{name} missing from the system prompt"
    tool_results = {m.tool_call_id: m.content for m in result["messages"] if isinstance(m, ToolMessage)}
    assert "release-notes/" in tool_results["c1"]
    assert "Group the changes under" in tool_results["c2"], "the skill's instructions reached the model"
    assert "Thanks to @handle" in tool_results["c3"]
    assert "Export skills as tar.gz" in tool_results["c6"]
    assert result["messages"][-1].content.startswith("Release notes written")
    with Client(env.grpc_addr, user=env.user, thread=thread) as c:
        assert c.read("/workspace/RELEASE_NOTES.md").content == "## Added\n- Export skills as tar.gz"


def test_deep_agent_sync(skillsvc_env) -> None:
    backend = SkillsvcBackend(skillsvc_env.grpc_addr, user=skillsvc_env.user)
    model = ScriptedChatModel(messages=script(*_turns()))
    agent = create_deep_agent(model=model, backend=backend, skills=skill_sources(backend))
    thread = "py-agent-" + uuid.uuid4().hex[:8]
    result = agent.invoke(
        {"messages": [{"role": "user", "content": "Write release notes for: export skills"}]},
        {"configurable": {"thread_id": thread}},
    )
    _check(model, result, skillsvc_env, thread)
    backend.close()


async def test_deep_agent_async(skillsvc_env) -> None:
    backend = SkillsvcBackend(skillsvc_env.grpc_addr, user=skillsvc_env.user)
    model = ScriptedChatModel(messages=script(*_turns()))
    agent = create_deep_agent(model=model, backend=backend, skills=skill_sources(backend))
    thread = "py-aagent-" + uuid.uuid4().hex[:8]
    result = await agent.ainvoke(
        {"messages": [{"role": "user", "content": "Write release notes for: export skills"}]},
        {"configurable": {"thread_id": thread}},
    )
    _check(model, result, skillsvc_env, thread)
    await backend.aclose()


# A tool result too large for the context: deepagents' middleware evicts it
# to /large_tool_results/<call id> at its artifacts root, "/" for a backend
# passed as it is.
_ROWS = "\n".join(f"row {i}" for i in range(20000))


@tool
def export_rows() -> str:
    """Every row of the table."""
    return _ROWS


def _eviction_turns() -> list[AIMessage | str]:
    return [
        tool_call("export_rows", "e1"),
        tool_call("read_file", "e2", file_path="/large_tool_results/e1", offset=19998, limit=2),
        AIMessage(content="The table ends at row 19999."),
    ]


def _check_eviction(result: dict, env, thread: str) -> None:
    tool_results = {m.tool_call_id: m.content for m in result["messages"] if isinstance(m, ToolMessage)}
    assert "Tool result too large" in tool_results["e1"] and "/large_tool_results/e1" in tool_results["e1"]
    assert "row 19998" in tool_results["e2"] and "row 19999" in tool_results["e2"], tool_results["e2"]
    with Client(env.grpc_addr, user=env.user, thread=thread) as c:
        assert c.read("/workspace/large_tool_results/e1").total_lines == 20000


def test_deep_agent_reads_back_an_evicted_tool_result(skillsvc_env) -> None:
    backend = SkillsvcBackend(skillsvc_env.grpc_addr, user=skillsvc_env.user)
    agent = create_deep_agent(model=ScriptedChatModel(messages=script(*_eviction_turns())), backend=backend, tools=[export_rows])
    thread = "py-evict-" + uuid.uuid4().hex[:8]
    result = agent.invoke({"messages": [{"role": "user", "content": "Where does the table end?"}]}, {"configurable": {"thread_id": thread}})
    _check_eviction(result, skillsvc_env, thread)
    backend.close()


async def test_deep_agent_reads_back_an_evicted_tool_result_async(skillsvc_env) -> None:
    backend = SkillsvcBackend(skillsvc_env.grpc_addr, user=skillsvc_env.user)
    agent = create_deep_agent(model=ScriptedChatModel(messages=script(*_eviction_turns())), backend=backend, tools=[export_rows])
    thread = "py-aevict-" + uuid.uuid4().hex[:8]
    result = await agent.ainvoke({"messages": [{"role": "user", "content": "Where does the table end?"}]}, {"configurable": {"thread_id": thread}})
    _check_eviction(result, skillsvc_env, thread)
    await backend.aclose()


async def test_summarization_offloads_history(skillsvc_env) -> None:
    """The summarization middleware appends the messages it summarizes to
    /conversation_history/<session>.md (a download, then an edit of the
    whole file), on the backend as it is."""
    backend = SkillsvcBackend(skillsvc_env.grpc_addr, user=skillsvc_env.user, thread="py-hist-" + uuid.uuid4().hex[:8])
    mw = SummarizationMiddleware(model=ScriptedChatModel(messages=script()), backend=backend)
    first = mw._offload_to_backend(backend, [HumanMessage(content="first question")], "s1")
    second = await mw._aoffload_to_backend(backend, [HumanMessage(content="second question")], "s1")
    assert first == second == "/conversation_history/s1.md"
    history = backend.read(first).file_data["content"]
    assert history.count("## Summarized at") == 2 and history.index("first question") < history.index("second question")
    assert backend.read("/workspace/conversation_history/s1.md").file_data["content"] == history
    await backend.aclose()
