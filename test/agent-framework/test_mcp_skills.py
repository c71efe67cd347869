"""Microsoft Agent Framework's own MCP skills source against skillsvc's /mcp.

agent-framework-core's MCPSkillsSource discovers skills by reading the
skill://index.json resource (never skills/list), reads a skill's SKILL.md
and its files with resources/read, and treats a missing file as "not found"
only when the server answers -32602 with data {"uri": ...}. Here it runs
unchanged, over the Python MCP SDK it ships with, on both protocol
revisions: the 2025-11-25 initialize handshake and the sessionless
2026-07-28.
"""

from __future__ import annotations

from contextlib import asynccontextmanager
from pathlib import Path
from types import SimpleNamespace

import httpx2
import pytest
from agent_framework import MCPSkillsSource, SkillsProvider, SkillsSourceContext
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

EXAMPLES = Path(__file__).resolve().parents[2] / "examples/skills"
# The example library cmd/testenv uploads for alice.
EXAMPLE_SKILLS = {"commit-message", "csv-summary", "release-notes"}

REVISIONS = {"2025-11-25": "legacy", "2026-07-28": "2026-07-28"}


@asynccontextmanager
async def connect(env, mode: str):
    headers = {"X-Skillsvc-User": env.user, "X-Skillsvc-Thread": "maf-1"}
    async with httpx2.AsyncClient(headers=headers) as http:
        transport = streamable_http_client(f"http://{env.http_addr}/mcp", http_client=http)
        async with Client(transport, mode=mode) as client:
            yield client


def context() -> SkillsSourceContext:
    # The source ignores its context (it serves the same skills whoever asks).
    return SkillsSourceContext(agent=SimpleNamespace(name="test"))


@pytest.mark.parametrize("revision", REVISIONS)
async def test_discovers_and_reads_skills(skillsvc_env, revision):
    async with connect(skillsvc_env, REVISIONS[revision]) as client:
        source = MCPSkillsSource(client=client)
        skills = {s.frontmatter.name: s for s in await source.get_skills(context())}
        assert set(skills) == EXAMPLE_SKILLS
        notes = skills["release-notes"]
        assert notes.frontmatter.description.startswith("Write")

        content = await notes.get_content()
        assert content.startswith("---\nname: release-notes\n")
        style = await notes.get_resource("references/style.md")
        assert style is not None
        assert await style.read() == (EXAMPLES / "writing/release-notes/references/style.md").read_text(encoding="utf-8")

        # A file the skill does not have is the framework's friendly
        # not-found (None), not an MCPError that fails the agent's run.
        assert await notes.get_resource("references/missing.md") is None
        assert await skills["csv-summary"].get_resource("scripts/nothing.py") is None


@pytest.mark.parametrize("revision", REVISIONS)
async def test_missing_skill_is_not_found(skillsvc_env, revision):
    from agent_framework._skills import MCPSkill, SkillFrontmatter

    async with connect(skillsvc_env, REVISIONS[revision]) as client:
        ghost = MCPSkill(SkillFrontmatter(name="ghost", description="Not in the library."), "skill://nowhere/ghost/SKILL.md", client)
        assert await ghost.get_resource("references/a.md") is None


@pytest.mark.parametrize("revision", REVISIONS)
async def test_skills_provider(skillsvc_env, revision):
    """What an agent's run gets from the source: the SkillsProvider's skill
    list in its instructions, and what its load_skill and
    read_skill_resource tools answer (the methods the tools call)."""
    async with connect(skillsvc_env, REVISIONS[revision]) as client:
        provider = SkillsProvider(MCPSkillsSource(client=client), disable_caching=True)
        skills, instructions, tools = await provider._create_context(context())
        for name in EXAMPLE_SKILLS:
            assert f"<name>{name}</name>" in instructions
        assert {"load_skill", "read_skill_resource"} <= {t.name for t in tools}
        assert (await provider._load_skill(skills, "release-notes")).startswith("---\nname: release-notes\n")
        style = (EXAMPLES / "writing/release-notes/references/style.md").read_text(encoding="utf-8")
        assert await provider._read_skill_resource(skills, "release-notes", "references/style.md") == style
        missing = await provider._read_skill_resource(skills, "release-notes", "references/missing.md")
        assert missing == "Error: Resource 'references/missing.md' not found in skill 'release-notes'."
