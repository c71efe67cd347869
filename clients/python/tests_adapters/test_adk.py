"""skillsvc.adk in Google ADK's own agent loop (google-adk, pinned in
requirements-adapters.txt): an LlmAgent with ADK's SkillToolset on a
SkillsvcSkillRegistry and ADK's LocalEnvironment, run by ADK's
InMemoryRunner, driven by a scripted model (an ADK BaseLlm) that searches
the library, loads skills and runs a skill's script."""

from __future__ import annotations

import logging
import stat
from collections.abc import AsyncGenerator
from pathlib import Path
from typing import Any

import pytest
from conftest import LONG_DESCRIPTION, SKILLS
from google.adk.agents import LlmAgent
from google.adk.environment import LocalEnvironment
from google.adk.models.base_llm import BaseLlm
from google.adk.models.llm_request import LlmRequest
from google.adk.models.llm_response import LlmResponse
from google.adk.runners import InMemoryRunner
from google.adk.skills import load_skills_from_dir
from google.adk.tools.skill_toolset import SkillToolset
from google.genai import types

from skillsvc import AsyncClient, NotFound
from skillsvc.adk import MAX_DESCRIPTION, SkillsvcSkillRegistry


class ScriptedLlm(BaseLlm):
    """Answers each turn with the next scripted item: a function call
    (name, args) or a final text; keeps the requests ADK sent it."""

    steps: list[Any]
    requests: list[LlmRequest] = []

    async def generate_content_async(self, llm_request: LlmRequest, stream: bool = False) -> AsyncGenerator[LlmResponse, None]:
        self.requests.append(llm_request)
        step = self.steps.pop(0)
        if isinstance(step, str):
            part = types.Part(text=step)
        else:
            name, args = step
            part = types.Part(function_call=types.FunctionCall(id=f"call_{len(self.requests)}", name=name, args=args))
        yield LlmResponse(content=types.Content(role="model", parts=[part]))


def responses(llm: ScriptedLlm) -> list[tuple[str, Any]]:
    """The tool results ADK handed the model, in order."""
    out = []
    for content in llm.requests[-1].contents:
        for part in content.parts or []:
            if part.function_response is not None:
                out.append((part.function_response.name, part.function_response.response))
    return out


async def run(agent: LlmAgent, text: str) -> None:
    runner = InMemoryRunner(agent=agent, app_name="skills")
    session = await runner.session_service.create_session(app_name="skills", user_id="u")
    async for _ in runner.run_async(user_id="u", session_id=session.id, new_message=types.Content(role="user", parts=[types.Part(text=text)])):
        pass


def modes(folder: Path) -> dict[str, int]:
    return {p.relative_to(folder).as_posix(): stat.S_IMODE(p.stat().st_mode) for p in sorted(folder.rglob("*")) if p.is_file()}


@pytest.fixture(params=["sync", "async"])
async def registry(request, skillsvc_env, client, tmp_path: Path):
    """The registry over a Client and over an AsyncClient."""
    if request.param == "sync":
        yield SkillsvcSkillRegistry(client, cache_dir=tmp_path / "cache")
        return
    async with AsyncClient(skillsvc_env.grpc_addr, user=client.identity.user, thread=client.identity.thread) as aclient:
        yield SkillsvcSkillRegistry(aclient, cache_dir=tmp_path / "cache")


@pytest.mark.filterwarnings("ignore:.*LocalEnvironment.*:UserWarning")
async def test_agent_searches_loads_and_runs_a_skill(registry, client, tmp_path: Path, caplog) -> None:
    caplog.set_level(logging.WARNING, logger="skillsvc.adk")
    llm = ScriptedLlm(
        model="scripted",
        steps=[
            ("search_skills", {"query": "*"}),
            ("search_skills", {"query": "greet people by name"}),
            ("load_skill", {"skill_name": "greeter"}),
            ("load_skill", {"skill_name": "verbose"}),
            ("load_skill", {"skill_name": "odd-meta"}),
            ("run_skill_script", {"skill_name": "greeter", "file_path": "scripts/greet.sh", "command": "sh skills/greeter/scripts/greet.sh Ada"}),
            "done",
        ],
    )
    env = LocalEnvironment(working_dir=tmp_path / "env")
    toolset = SkillToolset(registry=registry, environment=env)
    agent = LlmAgent(name="skills_user", model=llm, instruction="Use your skills.", tools=[toolset])
    await run(agent, "Greet Ada.")

    declared = {f.name for t in llm.requests[0].config.tools or [] for f in t.function_declarations or []}
    assert {"search_skills", "load_skill", "load_skill_resource", "run_skill_script"} <= declared
    (_, listed), (_, found), (_, greeter), (_, verbose), (_, odd), (_, ran) = responses(llm)

    # ADK saw every skill of the categorized library, by name, with its
    # description; the over-long one within ADK's 1,024 characters, and
    # all but the one ADK refuses, which is left out with a warning.
    seen = {f["name"]: f["description"] for f in listed["result"]}
    assert sorted(seen) == sorted(set(SKILLS) - {"odd-meta"})
    for name, description in SKILLS.items():
        if name not in ("verbose", "odd-meta"):
            assert seen[name] == description
    assert len(seen["verbose"]) <= MAX_DESCRIPTION and seen["verbose"][:100] == LONG_DESCRIPTION[:100]
    assert "greeter" in [f["name"] for f in found["result"]]

    # Loaded lazily, through ADK's load_skill: the instructions and the
    # frontmatter; the over-long description is cut with a warning, never an error.
    assert greeter["instructions"] == "Run scripts/greet.sh with the name."
    assert greeter["frontmatter"]["description"] == SKILLS["greeter"]
    assert "error" not in verbose, verbose
    assert len(verbose["frontmatter"]["description"]) == MAX_DESCRIPTION and verbose["frontmatter"]["description"].endswith("…")
    assert any("'verbose' has a description of" in r.getMessage() for r in caplog.records)
    assert any("'odd-meta' left out, ADK refuses its frontmatter: compatibility" in r.getMessage() for r in caplog.records)
    assert odd["error_code"] == "REGISTRY_ERROR" and "compatibility must be at most 500 characters" in odd["error"]

    # ADK ran the skill's script in its own environment, where its
    # SkillToolset wrote the skill's resources.
    assert ran["exit_code"] == 0 and ran["stdout"].strip() == "hello, Ada, from greeter", ran
    assert (tmp_path / "env" / "skills" / "greeter" / "references" / "guide.md").read_text() == "# Greeting guide\n\nBe kind.\n"

    # The skill ADK got is the verified local copy, whose files keep the
    # archive's modes (ADK's own environment writes contents only).
    skill = await registry.get_skill(name="greeter")
    local = Path(skill._uri.removeprefix("file://"))
    exported = client.export_skill("greeter", tmp_path / "export")
    assert {k: v & ~0o222 for k, v in modes(exported).items()} == modes(local)
    assert modes(local)["scripts/greet.sh"] & 0o111
    assert sorted(skill.resources.list_scripts()) == ["greet.sh"] and skill.resources.list_references() == ["guide.md"]


async def test_unknown_skill_is_adks_registry_error(registry) -> None:
    llm = ScriptedLlm(model="scripted", steps=[("load_skill", {"skill_name": "no-such-skill"}), "done"])
    agent = LlmAgent(name="skills_user", model=llm, instruction="Use your skills.", tools=[SkillToolset(registry=registry)])
    await run(agent, "Go.")
    ((_, failed),) = responses(llm)
    assert failed["error_code"] == "REGISTRY_ERROR" and "NOT_FOUND" in failed["error"]


def test_adks_own_folder_loader_fails_on_the_long_description(tmp_path: Path) -> None:
    # Why the registry cuts: ADK's load_skills_from_dir refuses the whole
    # folder for this one skill.
    for name, description in [("greeter", SKILLS["greeter"]), ("verbose", LONG_DESCRIPTION)]:
        (tmp_path / name).mkdir()
        (tmp_path / name / "SKILL.md").write_text(f"---\nname: {name}\ndescription: {description}\n---\nBody.\n")
    with pytest.raises(ValueError, match="description must be at most 1024 characters"):
        load_skills_from_dir(tmp_path)


async def test_category_narrows_search_and_load(client, tmp_path: Path) -> None:
    registry = SkillsvcSkillRegistry(client, category="tools", cache_dir=tmp_path / "cache")
    assert [f.name for f in await registry.search_skills(query="*")] == ["greeter"]
    assert [f.name for f in await registry.search_skills(query="summarize documents")] == []
    assert (await registry.get_skill(name="greeter")).name == "greeter"
    with pytest.raises(NotFound, match="not in this registry's skills"):
        await registry.get_skill(name="summarizer")
