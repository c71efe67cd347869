"""The prompt block and the skill tools for plain SDK loops."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from google.genai import types as genai_types

from skillsvc import Client
from skillsvc import tools as skill_tools
from skillsvc.tools import SkillTools

# The one definition the MCP server's tools are built from too.
SHARED = Path(__file__).resolve().parents[3] / "internal" / "tooldefs" / "tools.json"


@pytest.fixture
def tools(skillsvc_env):
    with Client(skillsvc_env.grpc_addr, user=skillsvc_env.user, thread="py-tools") as c:
        yield SkillTools(c)


def test_prompt(tools: SkillTools) -> None:
    block = tools.prompt(char_budget=4000)
    for name in ("release-notes", "commit-message", "csv-summary"):
        assert name in block
    assert "load_skill" in block
    assert len(tools.prompt(char_budget=300)) < len(block)


def test_definitions(tools: SkillTools) -> None:
    anthropic = tools.definitions("anthropic")
    assert [t["name"] for t in anthropic] == ["load_skill", "read_skill_file", "run_skill_script", "use_skill"]
    assert anthropic[0]["input_schema"]["required"] == ["skill"]
    openai = tools.definitions("openai")
    assert openai[0]["type"] == "function" and openai[0]["function"]["parameters"] == anthropic[0]["input_schema"]
    responses = tools.definitions("openai-responses")
    assert responses[1] == {"type": "function", **{k: v for k, v in openai[1]["function"].items()}}
    gemini = tools.definitions("gemini")
    # google-genai's own model accepts it as a FunctionDeclaration.
    declared = genai_types.FunctionDeclaration.model_validate(gemini[0])
    assert declared.name == "load_skill" and declared.parameters_json_schema == anthropic[0]["input_schema"]
    with pytest.raises(ValueError):
        tools.definitions("cohere")  # type: ignore[arg-type]


def test_definitions_are_the_shared_definition(tools: SkillTools) -> None:
    shared = json.loads(SHARED.read_text(encoding="utf-8"))["tools"]
    # The copy shipped in the package is the repository's definition.
    assert skill_tools.DEFINITIONS == shared
    by_name = {t["name"]: t for t in shared}
    for t in tools.definitions("anthropic"):
        want = by_name[t["name"]]
        assert t == {"name": want["name"], "description": want["description"], "input_schema": want["inputSchema"]}


def test_run(tools: SkillTools) -> None:
    text = tools.run("load_skill", {"skill": "commit-message", "arguments": "fix login"})
    assert "Base directory for this skill: /skills/writing/commit-message" in text
    assert "ARGUMENTS: fix login" in text
    # Arguments as the JSON string OpenAI sends.
    style = tools.run("read_skill_file", json.dumps({"skill": "release-notes", "path": "references/style.md"}))
    assert style.startswith("# Release notes style")
    assert tools.run("load_skill", {"skill": "no-such-skill"}).startswith("Error (NOT_FOUND)")
    assert tools.run("load_skill", {}).startswith("Error (INVALID_ARGUMENT)")
    assert tools.handles("load_skill") and not tools.handles("bash")
    with pytest.raises(ValueError):
        tools.run("bash", {})
