"""skillsvc.openai_agents in the OpenAI Agents SDK's own agent loop
(openai-agents, pinned in requirements-adapters.txt): a SandboxAgent with
the SDK's Skills capability on a SkillsvcSkillSource and its Shell, on the
SDK's local sandbox, driven by a scripted model (the SDK's Model interface)
that loads one skill and runs its script."""

from __future__ import annotations

import json
import stat
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from agents import Runner, set_tracing_disabled
from agents.exceptions import UserError
from agents.items import ModelResponse
from agents.models.interface import Model
from agents.run import RunConfig
from agents.sandbox import Manifest, SandboxAgent, SandboxRunConfig
from agents.sandbox.capabilities import Shell, Skills
from agents.sandbox.sandboxes.unix_local import UnixLocalSandboxClient
from agents.usage import Usage
from conftest import SKILLS
from openai.types.responses import ResponseFunctionToolCall, ResponseOutputMessage, ResponseOutputText

from skillsvc.openai_agents import SkillsvcSkillSource

# No network beyond loopback: the SDK's traces would go to OpenAI.
set_tracing_disabled(True)


class ScriptedModel(Model):
    """Answers each turn with the next scripted item: a tool call (name,
    arguments) or a final text; records what the SDK sent it."""

    def __init__(self, steps: list[tuple[str, dict[str, Any]] | str]) -> None:
        self.steps = list(steps)
        self.calls: list[dict[str, Any]] = []

    async def get_response(self, system_instructions, input, model_settings, tools, output_schema, handoffs, tracing, **_: Any) -> ModelResponse:
        self.calls.append({"instructions": system_instructions, "input": input, "tools": [t.name for t in tools]})
        step = self.steps.pop(0)
        n = len(self.calls)
        if isinstance(step, str):
            item: Any = ResponseOutputMessage(
                id=f"msg_{n}",
                type="message",
                role="assistant",
                status="completed",
                content=[ResponseOutputText(type="output_text", text=step, annotations=[])],
            )
        else:
            name, args = step
            item = ResponseFunctionToolCall(
                id=f"fc_{n}", call_id=f"call_{n}", type="function_call", name=name, arguments=json.dumps(args), status="completed"
            )
        return ModelResponse(output=[item], usage=Usage(), response_id=None)

    def stream_response(self, *args: Any, **kwargs: Any) -> AsyncIterator[Any]:
        raise NotImplementedError("the tests run without streaming")


def outputs(model: ScriptedModel) -> list[str]:
    """The tool results the SDK handed the model, in order."""
    last = model.calls[-1]["input"]
    return [str(i["output"]) for i in last if isinstance(i, dict) and i.get("type") == "function_call_output"]


def modes(folder: Path) -> dict[str, int]:
    return {p.relative_to(folder).as_posix(): stat.S_IMODE(p.stat().st_mode) for p in sorted(folder.rglob("*")) if p.is_file()}


async def test_agent_loads_a_skill_lazily_and_runs_its_script(client, tmp_path: Path) -> None:
    model = ScriptedModel(
        [
            ("load_skill", {"skill_name": "greeter"}),
            ("load_skill", {"skill_name": "greeter"}),
            ("exec_command", {"cmd": ".agents/greeter/scripts/greet.sh Ada", "login": False}),
            "done",
        ]
    )
    source = SkillsvcSkillSource(client, cache_dir=str(tmp_path / "cache"))
    agent = SandboxAgent(name="skills-user", model=model, instructions="Use your skills.", capabilities=[Skills(lazy_from=source), Shell()])
    workspace = tmp_path / "workspace"
    session = await UnixLocalSandboxClient().create(manifest=Manifest(root=str(workspace)))
    async with session:
        result = await Runner.run(
            agent, "Greet Ada.", run_config=RunConfig(sandbox=SandboxRunConfig(session=session), tracing_disabled=True)
        )
    assert result.final_output == "done"

    # The SDK listed every skill of the categorized library, flat, by name,
    # with its description, the over-long one too.
    first = model.calls[0]
    assert "load_skill" in first["tools"] and "exec_command" in first["tools"]
    for name, description in SKILLS.items():
        if name == "verbose":
            assert f"- verbose: {description[:200]}" in first["instructions"]
        else:
            assert f"- {name}: {description} (file: .agents/{name})" in first["instructions"]

    loaded, again, ran = outputs(model)
    assert "'status': 'loaded'" in loaded and "'skill_name': 'greeter'" in loaded and "'path': '.agents/greeter'" in loaded
    assert "'status': 'already_loaded'" in again
    assert "hello, Ada, from greeter" in ran

    # Lazily: only the skill the model asked for is in the sandbox, with the
    # files and modes the service's archive gives them.
    assert sorted(p.name for p in (workspace / ".agents").iterdir()) == ["greeter"]
    exported = client.export_skill("greeter", tmp_path / "export")
    want = modes(exported)
    assert sorted(want) == ["SKILL.md", "references/guide.md", "scripts/greet.sh"]
    assert modes(workspace / ".agents" / "greeter") == want
    assert want["scripts/greet.sh"] & 0o111 and not want["SKILL.md"] & 0o111
    for rel in want:
        assert (workspace / ".agents" / "greeter" / rel).read_bytes() == (exported / rel).read_bytes()


async def test_unknown_skill_fails_as_the_sdks_own_sources_do(client, tmp_path: Path) -> None:
    # LocalDirLazySkillSource raises SkillsConfigError("lazy skill not
    # found"), which ends the run; so does this source.
    model = ScriptedModel([("load_skill", {"skill_name": "no-such-skill"}), "done"])
    source = SkillsvcSkillSource(client, cache_dir=str(tmp_path / "cache"))
    agent = SandboxAgent(name="skills-user", model=model, instructions="Use your skills.", capabilities=[Skills(lazy_from=source)])
    session = await UnixLocalSandboxClient().create(manifest=Manifest(root=str(tmp_path / "workspace")))
    async with session:
        with pytest.raises(UserError, match="lazy skill not found"):
            await Runner.run(agent, "Go.", run_config=RunConfig(sandbox=SandboxRunConfig(session=session), tracing_disabled=True))
    assert not (tmp_path / "workspace" / ".agents").exists()


def test_scope_and_category_narrow_the_listing(client) -> None:
    listed = SkillsvcSkillSource(client, category="tools").list_skill_metadata(skills_path=".agents")
    assert [(m.name, str(m.path)) for m in listed] == [("greeter", ".agents/greeter")]
    everything = SkillsvcSkillSource(client).list_skill_metadata(skills_path="skills")
    assert sorted(m.name for m in everything) == sorted(SKILLS)


async def test_runner_made_sandbox(client, tmp_path: Path) -> None:
    # As docs/agents/frameworks.md connects it: the Runner creates the
    # sandbox session from the sandbox client.
    model = ScriptedModel(
        [("load_skill", {"skill_name": "greeter"}), ("exec_command", {"cmd": ".agents/greeter/scripts/greet.sh Bo", "login": False}), "done"]
    )
    source = SkillsvcSkillSource(client, cache_dir=str(tmp_path / "cache"))
    agent = SandboxAgent(name="helper", model=model, instructions="Use your skills.", capabilities=[Skills(lazy_from=source), Shell()])
    result = await Runner.run(
        agent, "Greet Bo.", run_config=RunConfig(sandbox=SandboxRunConfig(client=UnixLocalSandboxClient()), tracing_disabled=True)
    )
    assert result.final_output == "done"
    loaded, ran = outputs(model)
    assert "'status': 'loaded'" in loaded and "hello, Bo, from greeter" in ran
