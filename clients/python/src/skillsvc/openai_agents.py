"""SkillsvcSkillSource: a skillsvc library as the OpenAI Agents SDK's lazy skills.

    from agents import Runner
    from agents.run import RunConfig
    from agents.sandbox import SandboxAgent, SandboxRunConfig
    from agents.sandbox.capabilities import Skills
    from agents.sandbox.sandboxes.unix_local import UnixLocalSandboxClient
    from skillsvc import Client
    from skillsvc.openai_agents import SkillsvcSkillSource

    client = Client("127.0.0.1:7070", user="alice", thread="t1")
    agent = SandboxAgent(name="helper", instructions="...",
                         capabilities=[Skills(lazy_from=SkillsvcSkillSource(client=client))])
    await Runner.run(agent, "...", run_config=RunConfig(sandbox=SandboxRunConfig(client=UnixLocalSandboxClient())))

The SDK's Skills capability lists the skills in the agent's instructions
(list_skill_metadata: one ListSkills listing of the caller's view, scoped
as the client's identity is, or by ``scope`` and ``category``) and gives the
model a ``load_skill`` tool. load_skill materializes the skill with
skillsvc.runner.materialize (fetched once per manifest digest, every file
checked against the manifest) and writes its files into the sandbox session
under <skills_path>/<name>, each with the mode the archive gave it, so
scripts stay executable. Names are flat, the skill's name: a categorized
library (/skills/<category>/<skill>) shows every skill, where the SDK's own
folder sources look one level down only.

Needs the openai-agents package (pip install 'skillsvc[openai-agents]');
tested with openai-agents 0.24.0.
"""

from __future__ import annotations

import asyncio
import io
import os
import stat
from collections import defaultdict
from pathlib import Path
from typing import Any

from pydantic import PrivateAttr

try:
    from agents.sandbox.capabilities.skills import LazySkillSource, SkillMetadata
    from agents.sandbox.errors import ExecNonZeroError, SkillsConfigError, WorkspaceReadNotFoundError
    from agents.sandbox.session.base_sandbox_session import BaseSandboxSession
    from agents.sandbox.types import User
    from agents.sandbox.workspace_paths import SandboxPathGrant
except ImportError as err:  # pragma: no cover - depends on the environment
    raise ImportError("skillsvc.openai_agents needs the openai-agents package: pip install 'skillsvc[openai-agents]'") from err

from .runner import materialize

__all__ = ["SkillsvcSkillSource"]


class SkillsvcSkillSource(LazySkillSource):
    """The skills of a skillsvc library, listed up front and loaded into
    the sandbox one at a time when the model calls ``load_skill``.

    client is a skillsvc.Client (synchronous: the SDK lists skills from
    synchronous code); scope and category narrow the listing as
    ListSkills's do; cache_dir is the materialize cache (default:
    skillsvc.runner.cache_root())."""

    scope: str = ""
    category: str | None = None
    cache_dir: str | None = None

    # Private, so the SDK's per-run clone of the capability (which copies
    # every field it finds) shares the client and its channel.
    _client: Any = PrivateAttr()

    def __init__(self, client: Any, **fields: Any) -> None:
        super().__init__(**fields)
        self._client = client

    @property
    def client(self) -> Any:
        return self._client

    def list_skill_metadata(
        self,
        *,
        skills_path: str,
        source_grants: tuple[SandboxPathGrant, ...] = (),
    ) -> list[SkillMetadata]:
        return [
            SkillMetadata(name=s.name, description=s.description or "No description provided.", path=Path(skills_path) / s.name)
            for s in self.client.iter_skills(scope=self.scope, category=self.category)
        ]

    async def load_skill(
        self,
        *,
        skill_name: str,
        session: BaseSandboxSession,
        skills_path: str,
        user: str | User | None = None,
    ) -> dict[str, str]:
        listed = await asyncio.to_thread(self.list_skill_metadata, skills_path=skills_path)
        match = next((m for m in listed if m.name == skill_name), None)
        if match is None:
            raise SkillsConfigError(message="lazy skill not found", context={"skill_name": skill_name, "skills_path": skills_path})
        path = str(match.path).replace("\\", "/")
        dest = Path(session.state.manifest.root) / match.path
        try:
            (await session.read(dest / "SKILL.md", user=user)).close()
            return {"status": "already_loaded", "skill_name": match.name, "path": path}
        except (FileNotFoundError, WorkspaceReadNotFoundError):
            pass
        local = await asyncio.to_thread(materialize, self.client, match.name, cache_dir=self.cache_dir)
        await write_skill(session, local.path, dest, user=user)
        return {"status": "loaded", "skill_name": match.name, "path": path}


async def write_skill(session: BaseSandboxSession, src: Path, dest: Path, *, user: str | User | None = None) -> None:
    """Copies a materialized skill folder into the session at dest, each
    file with its archive mode. The cache holds files read-only (the
    runner takes their write bits), so the owner's write bit comes back
    here: the archive's 0644 and 0755 arrive as they were."""
    by_mode: dict[str, list[Path]] = defaultdict(list)
    for dirpath, _dirs, names in os.walk(src):
        for name in sorted(names):
            local = Path(dirpath) / name
            target = dest / local.relative_to(src)
            await session.mkdir(target.parent, parents=True, user=user)
            await session.write(target, io.BytesIO(local.read_bytes()), user=user)
            by_mode[f"{stat.S_IMODE(local.stat().st_mode) | 0o200:o}"].append(target)
    for mode, paths in sorted(by_mode.items()):
        command = ("chmod", mode, *paths)
        result = await session.exec(*command, shell=False, user=user)
        if not result.ok():
            raise ExecNonZeroError(result, command=command)
