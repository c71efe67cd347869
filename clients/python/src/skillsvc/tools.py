"""Skills for plain model-SDK loops (no agent framework).

    tools = SkillTools(client)
    system = "You are a helpful agent.\\n\\n" + tools.prompt(query=task)
    response = anthropic.messages.create(..., system=system, tools=tools.definitions("anthropic"))
    for block in response.content:
        if block.type == "tool_use":
            result = tools.run(block.name, block.input)

``prompt()`` is the FormatSkills block (each skill's name, description and
location, within a character budget; given the task, the skills most
relevant to it); ``load_skill`` returns a skill's
instructions (RenderSkill, with the task as $ARGUMENTS) and
``read_skill_file`` one of its files, so the model pays context only for
the skills it uses.
"""

from __future__ import annotations

import json
from importlib import resources
from typing import Any, Literal

from .client import MAX_QUERY_BYTES, Client, bounded_query
from .errors import SkillsvcError

Style = Literal["anthropic", "openai", "openai-responses", "gemini"]

# The tools' names, descriptions and input schemas: a copy of the one
# definition (internal/tooldefs/tools.json in the repository), which the
# MCP server's tools are built from too, shipped as package data.
DEFINITIONS: list[dict[str, Any]] = json.loads(
    resources.files(__package__).joinpath("tool_definitions.json").read_text(encoding="utf-8")
)["tools"]


def _tool(name: str) -> dict[str, Any]:
    (t,) = (t for t in DEFINITIONS if t["name"] == name)
    return {"name": t["name"], "description": t["description"], "parameters": t["inputSchema"]}


# The MCP server's list_skills and search_skills have no counterpart here:
# prompt() puts the list in the system prompt instead.
LOAD_SKILL = _tool("load_skill")
READ_SKILL_FILE = _tool("read_skill_file")


def definition(tool: dict[str, Any], style: Style) -> dict[str, Any]:
    """One tool in the shape an SDK takes: Anthropic Messages, OpenAI Chat
    Completions, OpenAI Responses, or a Gemini (google-genai)
    FunctionDeclaration, to wrap in ``Tool(function_declarations=[...])``."""
    name, description, schema = tool["name"], tool["description"], tool["parameters"]
    if style == "anthropic":
        return {"name": name, "description": description, "input_schema": schema}
    if style == "openai":
        return {"type": "function", "function": {"name": name, "description": description, "parameters": schema}}
    if style == "openai-responses":
        return {"type": "function", "name": name, "description": description, "parameters": schema}
    if style == "gemini":
        # parameters_json_schema takes JSON Schema as is; Gemini's
        # `parameters` is an OpenAPI subset without additionalProperties.
        return {"name": name, "description": description, "parameters_json_schema": schema}
    raise ValueError(f"unknown tool style {style!r}")


class SkillTools:
    """The prompt block and the skill tools for one client (one identity)."""

    def __init__(self, client: Client) -> None:
        self.client = client

    def prompt(
        self,
        *,
        query: str = "",
        scope: str = "",
        char_budget: int = 0,
        format: str = "",
        category: str | None = None,
        max_query_bytes: int = MAX_QUERY_BYTES,
    ) -> str:
        """The skills block for the system prompt (FormatSkills), naming
        load_skill as the way to use a skill. query is the task or the
        user's latest message, cut to max_query_bytes (the server's
        --skills.max-query-bytes): the block then holds the skills most
        relevant to it. scope names a skill set ("": the client's)."""
        r = self.client.format_skills(
            char_budget=char_budget,
            format=format,
            category=category,
            search_tool="",
            query=bounded_query(query, max_query_bytes),
            scope=scope,
        )
        if not r.included:
            return ""
        return r.text + "\n\nTo use a skill, call load_skill with its name first, then follow its instructions."

    def definitions(self, style: Style = "anthropic") -> list[dict[str, Any]]:
        return [definition(LOAD_SKILL, style), definition(READ_SKILL_FILE, style)]

    def handles(self, name: str) -> bool:
        return name in (LOAD_SKILL["name"], READ_SKILL_FILE["name"])

    def run(self, name: str, arguments: dict[str, Any] | str) -> str:
        """Runs a tool call and returns the text for the tool result. A
        failure is text too ("Error (NOT_FOUND): ..."), so the model can
        correct itself."""
        args = json.loads(arguments) if isinstance(arguments, str) else dict(arguments)
        try:
            if name == LOAD_SKILL["name"]:
                return self.client.render_skill(args["skill"], arguments=args.get("arguments", "")).text
            if name == READ_SKILL_FILE["name"]:
                return self.client.read_skill_file(args["skill"], args["path"]).content
        except SkillsvcError as err:
            return f"Error ({err.code.name}): {err.message}"
        except KeyError as err:
            return f"Error (INVALID_ARGUMENT): missing argument {err.args[0]!r}"
        raise ValueError(f"{name} is not a skills tool")
