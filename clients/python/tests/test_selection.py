"""Passing the task and a scope: prompt() and SkillsPromptMiddleware ask
FormatSkills for the skills relevant to the task (the real binary answers),
and every request carries query, scope and the identity's scope and
harness headers as the server receives them (an in-process recorder)."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from concurrent import futures
from typing import Any

import grpc
import pytest
from deepagents import create_deep_agent

import skillsvc
from skillsvc import MAX_QUERY_BYTES, AsyncClient, Client, bounded_query
from skillsvc.deepagents import SkillsPromptMiddleware, SkillsvcBackend
from skillsvc.testing_models import ScriptedChatModel, script
from skillsvc.tools import SkillTools
from skillsvc.v1 import admin_pb2, skills_pb2, skills_pb2_grpc

# A small library whose relevant skill comes last in every order that
# ignores the task, and a budget that holds two skills: only a block chosen
# for the task can hold it.
LIBRARY = {
    "api-docs": "Write reference documentation for an HTTP API: endpoints, parameters, examples and error codes.",
    "bug-triage": "Triage incoming bug reports: reproduce, label severity and assign an owner.",
    "changelog": "Keep a changelog file up to date with each release's added, changed and fixed entries.",
    "data-cleanup": "Clean a tabular dataset: remove duplicate rows, fix types and fill missing values.",
    "expense-report": "Prepare an expense report from receipts, with totals per category and currency.",
    "vendor-contract-review": "Review a vendor or supplier agreement and flag risky clauses: indemnity, liability caps, auto-renewal.",
}
# What a skill says it runs in, matched against the caller's harness.
COMPATIBILITY = {"bug-triage": "Needs Codex (its gh tool)"}
TARGET = "vendor-contract-review"
TASK = "Can you check this supplier agreement for risky indemnity clauses before I sign it?"
BUDGET = 600


@pytest.fixture(scope="module")
def library_user(skillsvc_env) -> Iterator[str]:
    user = "py-sel-" + uuid.uuid4().hex[:6]
    with Client(skillsvc_env.grpc_addr) as admin:
        for name, description in LIBRARY.items():
            compat = f"compatibility: {json.dumps(COMPATIBILITY[name])}\n" if name in COMPATIBILITY else ""
            md = f"---\nname: {name}\ndescription: {json.dumps(description)}\n{compat}---\nSteps for {name}.\n"
            admin.put_library_file(f"{name}/SKILL.md", md.encode(), user=user)
        admin.drop_skill_index(user=user)
        yield user
        for name in LIBRARY:
            admin.delete_library_file(f"{name}/SKILL.md", user=user)


def test_prompt_holds_the_skill_for_the_task(skillsvc_env, library_user: str) -> None:
    with Client(skillsvc_env.grpc_addr, user=library_user, thread="t") as c:
        tools = SkillTools(c)
        without = tools.prompt(char_budget=BUDGET)
        assert without and TARGET not in without, "the budget must leave the target out of a block chosen without the task"
        assert TARGET in tools.prompt(char_budget=BUDGET, query=TASK)
        # A message longer than the server takes is cut, not refused.
        assert TARGET in tools.prompt(char_budget=BUDGET, query=TASK + " ñ" * MAX_QUERY_BYTES)


async def test_async_format_skills_query(skillsvc_env, library_user: str) -> None:
    async with AsyncClient(skillsvc_env.grpc_addr, user=library_user, thread="t") as c:
        r = await c.format_skills(char_budget=BUDGET, query=TASK)
        assert TARGET in r.text and r.omitted > 0


def _agent_system_prompt(backend: SkillsvcBackend, middleware: SkillsPromptMiddleware, message: str) -> str:
    model = ScriptedChatModel(messages=script("Done."))
    agent = create_deep_agent(model=model, backend=backend, middleware=[middleware])
    agent.invoke({"messages": [{"role": "user", "content": message}]}, {"configurable": {"thread_id": "py-sel-" + uuid.uuid4().hex[:8]}})
    return str(model.seen[0][0].text)


def test_deep_agent_block_fits_the_latest_message(skillsvc_env, library_user: str) -> None:
    backend = SkillsvcBackend(skillsvc_env.grpc_addr, user=library_user)
    try:
        system = _agent_system_prompt(backend, SkillsPromptMiddleware(backend, char_budget=BUDGET), TASK)
        assert "## Skills" in system and f"/skills/{TARGET}/SKILL.md" in system
        # Turned off: the block ignores the task; a fixed query wins over the message.
        off = _agent_system_prompt(backend, SkillsPromptMiddleware(backend, char_budget=BUDGET, query=False), TASK)
        assert "<available_skills>" in off and TARGET not in off
        fixed = _agent_system_prompt(backend, SkillsPromptMiddleware(backend, char_budget=BUDGET, query=TASK), "Hello.")
        assert TARGET in fixed
    finally:
        backend.close()


async def test_deep_agent_block_fits_the_latest_message_async(skillsvc_env, library_user: str) -> None:
    backend = SkillsvcBackend(skillsvc_env.grpc_addr, user=library_user)
    model = ScriptedChatModel(messages=script("Done."))
    agent = create_deep_agent(model=model, backend=backend, middleware=[SkillsPromptMiddleware(backend, char_budget=BUDGET)])
    await agent.ainvoke({"messages": [{"role": "user", "content": TASK}]}, {"configurable": {"thread_id": "py-asel"}})
    assert TARGET in str(model.seen[0][0].text)
    await backend.aclose()


def test_scope_and_harness_choose_the_skill_set(skillsvc_env, library_user: str) -> None:
    """A scope chosen per call or by the client's header narrows listing,
    block and search; the declared harness decides compatibility."""
    contracts = admin_pb2.SkillScope(name="contracts", include=admin_pb2.SkillScopeRule(names=["vendor-*", "expense-report"]))
    codex = admin_pb2.SkillScope(name="codex", compatibility=admin_pb2.SKILL_SCOPE_COMPATIBILITY_HARNESS)
    with Client(skillsvc_env.grpc_addr) as admin, Client(skillsvc_env.grpc_addr, user=library_user, thread="t") as c:
        admin.set_skill_scope(contracts, user=library_user)
        assert [s.name for s in admin.set_skill_scope(codex, user=library_user).scopes] == ["codex", "contracts"]
        try:
            assert len(list(c.iter_skills())) == len(LIBRARY)
            assert sorted(s.name for s in c.iter_skills(scope="contracts")) == ["expense-report", TARGET]
            scoped = c.with_identity(scope="contracts")
            assert sorted(s.name for s in scoped.iter_skills()) == ["expense-report", TARGET]
            block = scoped.format_skills(query="release changelog")
            assert block.included == 2 and "changelog" not in block.text
            assert [r.skill.name for r in c.search_skills("changelog", scope="contracts").results] == []
            assert c.search_skills("changelog").results[0].skill.name == "changelog"
            assert [s.name for s in c.with_identity(harness="codex").iter_skills(scope="codex")] == ["bug-triage"]
            assert [s.name for s in c.with_identity(harness="claude-code", scope="codex").iter_skills()] == []
            with pytest.raises(skillsvc.NotFound):
                c.list_skills(scope="no-such-scope")
        finally:
            admin.delete_skill_scope("contracts", user=library_user)
            assert [s.name for s in admin.delete_skill_scope("codex", user=library_user).scopes] == []


def test_bounded_query() -> None:
    assert bounded_query("short") == "short"
    assert bounded_query("aé", 2) == "a", "a character is never cut in two"
    long = "ü" * 3000  # 6000 bytes
    cut = bounded_query(long)
    assert len(cut.encode()) == MAX_QUERY_BYTES and long.startswith(cut)


class _Recorder(skills_pb2_grpc.SkillsServiceServicer):
    """Keeps each request and its metadata, as the server receives them."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, Any, dict[str, str]]] = []

    def _keep(self, method: str, request: Any, context: grpc.ServicerContext) -> None:
        self.calls.append((method, request, dict(context.invocation_metadata())))

    def FormatSkills(self, request: Any, context: grpc.ServicerContext) -> skills_pb2.FormatSkillsResponse:
        self._keep("FormatSkills", request, context)
        return skills_pb2.FormatSkillsResponse(text="<available_skills/>", included=1)

    def ListSkills(self, request: Any, context: grpc.ServicerContext) -> skills_pb2.ListSkillsResponse:
        self._keep("ListSkills", request, context)
        return skills_pb2.ListSkillsResponse()

    def SearchSkills(self, request: Any, context: grpc.ServicerContext) -> skills_pb2.SearchSkillsResponse:
        self._keep("SearchSkills", request, context)
        return skills_pb2.SearchSkillsResponse()


@pytest.fixture
def recorder() -> Iterator[tuple[_Recorder, str]]:
    rec = _Recorder()
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=2))
    skills_pb2_grpc.add_SkillsServiceServicer_to_server(rec, server)
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    yield rec, f"127.0.0.1:{port}"
    server.stop(None)


def test_requests_carry_query_scope_and_harness(recorder: tuple[_Recorder, str]) -> None:
    rec, addr = recorder
    with Client(addr, user="u", thread="t", scope="contracts", harness="claude-code") as c:
        c.format_skills(query=TASK, scope="legal")
        c.list_skills(scope="legal")
        c.search_skills("indemnity", scope="legal")
        SkillTools(c).prompt(query="ü" * 3000)
        c.with_identity(scope=None).list_skills()
    (fmt, req, md), (lst, lreq, _), (srch, sreq, _), (_, preq, _), (_, _, unscoped) = rec.calls
    assert (fmt, req.query, req.scope) == ("FormatSkills", TASK, "legal")
    assert (lst, lreq.scope) == ("ListSkills", "legal") and (srch, sreq.scope) == ("SearchSkills", "legal")
    assert (md["x-skillsvc-scope"], md["x-skillsvc-harness"], md["x-skillsvc-user"]) == ("contracts", "claude-code", "u")
    assert len(preq.query.encode()) == MAX_QUERY_BYTES and preq.query == "ü" * (MAX_QUERY_BYTES // 2)
    assert "x-skillsvc-scope" not in unscoped and unscoped["x-skillsvc-harness"] == "claude-code"


def test_middleware_sends_the_latest_user_message(recorder: tuple[_Recorder, str]) -> None:
    rec, addr = recorder
    backend = SkillsvcBackend(addr, user="u", thread="t", scope="contracts")
    model = ScriptedChatModel(messages=script("Done."))
    agent = create_deep_agent(model=model, backend=backend, middleware=[SkillsPromptMiddleware(backend, scope="legal")])
    long = "Review this agreement. " + "x" * 5000
    agent.invoke({"messages": [{"role": "user", "content": "Earlier question."}, {"role": "assistant", "content": "Answer."}, {"role": "user", "content": long}]})
    (method, req, md), *_ = rec.calls
    assert method == "FormatSkills" and req.scope == "legal" and md["x-skillsvc-scope"] == "contracts"
    assert req.query == long[:MAX_QUERY_BYTES], "the latest user message, bounded"
    assert "<available_skills/>" in str(model.seen[0][0].text)
    backend.close()
