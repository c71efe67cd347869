"""SkillsvcSkillRegistry: a skillsvc library as a Google ADK skill registry.

    from google.adk.agents import LlmAgent
    from google.adk.tools.skill_toolset import SkillToolset
    from skillsvc import AsyncClient
    from skillsvc.adk import SkillsvcSkillRegistry

    registry = SkillsvcSkillRegistry(AsyncClient("127.0.0.1:7070", user="alice", thread="t1"))
    agent = LlmAgent(name="helper", model="gemini-3.5-flash", instruction="...",
                     tools=[SkillToolset(registry=registry)])

ADK's SkillToolset asks a registry for skills by name (its load_skill,
load_skill_resource and run_skill_script tools) and offers the model a
search_skills tool over it. search_skills is skillsvc's SearchSkills (the
best matches for the query, in the caller's view); the query "*" lists every
skill (ListSkills). get_skill materializes the skill with
skillsvc.runner.materialize (fetched once per manifest digest, every file
checked against the manifest) and reads its references/, assets/ and
scripts/ as ADK's own load_skill_from_dir does; the skill's ``_uri`` is that
verified folder, where its files keep their modes.

ADK refuses a description over 1,024 characters (load_skills_from_dir then
fails the whole folder), which skillsvc serves with a warning: such a
description is cut to 1,024 characters, with a warning logged, and a skill
ADK refuses for any other reason (a compatibility over 500 characters, say) is left
out of search results with a warning, never failing the rest.

Needs the google-adk package (pip install 'skillsvc[adk]'); tested with
google-adk 2.13.0. client is a skillsvc.Client or AsyncClient.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
from pathlib import Path
from typing import Any

try:
    from google.adk.skills import Frontmatter, Resources, Script, Skill, SkillRegistry
    from pydantic import ValidationError
except ImportError as err:  # pragma: no cover - depends on the environment
    raise ImportError("skillsvc.adk needs the google-adk package: pip install 'skillsvc[adk]'") from err

from .client import AsyncClient
from .errors import NotFound
from .runner import amaterialize, materialize

__all__ = ["MAX_DESCRIPTION", "SkillsvcSkillRegistry"]

#: The longest description ADK's Frontmatter accepts.
MAX_DESCRIPTION = 1024

#: The query for which search_skills lists every skill.
LIST_ALL = "*"

log = logging.getLogger(__name__)


class SkillsvcSkillRegistry(SkillRegistry):
    """A skillsvc library, as ADK's SkillToolset(registry=...) uses one.

    scope and category narrow what is listed and searched as ListSkills's
    and SearchSkills's do, and what get_skill serves; limit caps a search's results (0: the server's
    default); cache_dir is the materialize cache (default:
    skillsvc.runner.cache_root())."""

    def __init__(
        self,
        client: Any,
        *,
        scope: str = "",
        category: str | None = None,
        limit: int = 0,
        cache_dir: str | os.PathLike[str] | None = None,
    ) -> None:
        self.client = client
        self.scope = scope
        self.category = category
        self.limit = limit
        self.cache_dir = cache_dir
        self._async = isinstance(client, AsyncClient)

    async def _call(self, method: str, *args: Any, **kwargs: Any) -> Any:
        fn = getattr(self.client, method)
        if self._async:
            return await fn(*args, **kwargs)
        return await asyncio.to_thread(fn, *args, **kwargs)

    def search_tool_description(self) -> str | None:
        return (
            "Searches the skill library for the skills that best match a query (keywords or a task), "
            f'returning their names and descriptions; the query "{LIST_ALL}" lists every skill.'
        )

    async def search_skills(self, *, query: str) -> list[Frontmatter]:
        if query.strip() == LIST_ALL:
            summaries = await self.list_skills()
        else:
            resp = await self._call("search_skills", query, limit=self.limit, category=self.category, scope=self.scope)
            summaries = [r.skill for r in resp.results]
        out = []
        for s in summaries:
            try:
                out.append(frontmatter(s.name, _summary_fields(s)))
            except ValidationError as err:
                log.warning("skillsvc.adk: skill %r left out, ADK refuses its frontmatter: %s", s.name, _first_error(err))
        return out

    async def list_skills(self) -> list[Any]:
        """Every skill of the view (SkillSummary messages), page after page."""
        out, token = [], ""
        while True:
            page = await self._call("list_skills", page_token=token, category=self.category, scope=self.scope)
            out.extend(page.skills)
            if not (token := page.next_page_token):
                return out

    async def get_skill(self, *, name: str) -> Skill:
        if (self.scope or self.category is not None) and name not in {s.name for s in await self.list_skills()}:
            # GetSkill knows no scope= or category=: the registry serves only what it lists.
            raise NotFound(f"skill {name!r} is not in this registry's skills (scope {self.scope!r}, category {self.category!r})")
        resp = await self._call("get_skill", name)
        if self._async:
            local = await amaterialize(self.client, name, cache_dir=self.cache_dir)
        else:
            local = await asyncio.to_thread(materialize, self.client, name, cache_dir=self.cache_dir)
        fields = json.loads(resp.skill.frontmatter_json or "{}")
        if not isinstance(fields, dict):
            fields = {}
        skill = Skill(
            frontmatter=frontmatter(resp.skill.name, fields),
            instructions=resp.body.strip(),  # as ADK's own loader trims it
            resources=Resources(
                references=_load_dir(local.path / "references"),
                assets=_load_dir(local.path / "assets"),
                scripts=_scripts(_load_dir(local.path / "scripts")),
            ),
        )
        skill._uri = local.path.as_uri()
        return skill


def frontmatter(name: str, fields: dict[str, Any]) -> Frontmatter:
    """ADK's Frontmatter of a skill: fields as written, the name skillsvc
    addresses it by, and a description over MAX_DESCRIPTION cut to it (with
    a warning). Raises pydantic's ValidationError where ADK refuses the rest."""
    fields = dict(fields, name=name)
    description = str(fields.get("description") or "")
    if len(description) > MAX_DESCRIPTION:
        log.warning(
            "skillsvc.adk: skill %r has a description of %d characters; ADK takes at most %d, so it is cut",
            name,
            len(description),
            MAX_DESCRIPTION,
        )
        fields["description"] = description[: MAX_DESCRIPTION - 1] + "…"
    return Frontmatter.model_validate(fields)


def _summary_fields(s: Any) -> dict[str, Any]:
    fields: dict[str, Any] = {"description": s.description}
    if s.license:
        fields["license"] = s.license
    if s.compatibility:
        fields["compatibility"] = s.compatibility
    if s.allowed_tools:
        fields["allowed-tools"] = " ".join(s.allowed_tools)
    if s.metadata:
        fields["metadata"] = dict(s.metadata)
    return fields


def _first_error(err: ValidationError) -> str:
    e = err.errors()[0]
    return f"{'.'.join(str(p) for p in e['loc'])}: {e['msg']}"


def _load_dir(directory: Path) -> dict[str, str | bytes]:
    """A folder's files by POSIX path: text where UTF-8, else bytes (as ADK's
    own loader reads them)."""
    files: dict[str, str | bytes] = {}
    if not directory.is_dir():
        return files
    for path in sorted(directory.rglob("*")):
        if path.is_file() and "__pycache__" not in path.parts:
            data = path.read_bytes()
            try:
                files[path.relative_to(directory).as_posix()] = data.decode("utf-8")
            except UnicodeDecodeError:
                files[path.relative_to(directory).as_posix()] = data
    return files


def _scripts(raw: dict[str, str | bytes]) -> dict[str, Script]:
    out = {}
    for name, src in raw.items():
        if isinstance(src, bytes):
            log.warning("skillsvc.adk: script %r is not UTF-8 text; ADK holds scripts as text, so it is left out", name)
            continue
        out[name] = Script(src=src)
    return out
