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
the skills it uses. ``run_skill_script`` runs one of a skill's scripts here
(skillsvc.runner: bubblewrap where it runs, the thread's /workspace) and
``use_skill`` runs a code skill (skillsvc.codeskills), only with
``trust_code=True``; both run where this process runs, never on the server.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from importlib import resources
from typing import Any, Literal

from . import codeskills, runner
from .client import MAX_QUERY_BYTES, Client, bounded_query, trust_line
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
# Tools that run where the agent runs (runsIn "client"): never on the server.
RUN_SKILL_SCRIPT = _tool("run_skill_script")
USE_SKILL = _tool("use_skill")

# The kind a runner error shows in a tool result, as the TypeScript client's.
SCRIPT_ERROR_KINDS: list[tuple[type[runner.ScriptError], str]] = [
    (runner.ScriptNotFound, "SCRIPT_NOT_FOUND"),
    (runner.ScriptOutsideSkill, "SCRIPT_OUTSIDE_SKILL"),
    (runner.UnknownInterpreter, "UNKNOWN_INTERPRETER"),
    (runner.BadOutput, "BAD_OUTPUT"),
    (runner.ScriptTimeout, "TIMEOUT"),
    (runner.OutputTooLarge, "OUTPUT_TOO_LARGE"),
    (runner.WorkspaceTooLarge, "WORKSPACE_TOO_LARGE"),
    (runner.SandboxUnavailable, "SANDBOX_UNAVAILABLE"),
]
# How much of a BadOutput's output its tool result carries.
BAD_OUTPUT_BYTES = 4096
MAX_TIMEOUT_SECONDS = 3600


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


def _compact(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def _cut(text: str, limit: int) -> str:
    raw = text.encode()
    return raw[:limit].decode("utf-8", "ignore") if len(raw) > limit else text


def script_error_text(err: runner.ScriptError) -> str:
    """A runner error as a tool result: ``Error (KIND): message``. A
    BadOutput's goes on with the output: a line ``stdout: `` and stdout (with
    a line end added if it has none), ``stderr: `` and stderr, cut to 4 KiB
    in all."""
    kind = next((k for cls, k in SCRIPT_ERROR_KINDS if isinstance(err, cls)), err.code.name)
    text = f"Error ({kind}): {err.message}"
    if isinstance(err, runner.BadOutput):
        out = f"stdout: {err.stdout}"
        out += ("" if out.endswith("\n") else "\n") + f"stderr: {err.stderr}"
        text += "\n" + _cut(out, BAD_OUTPUT_BYTES)
    return text


def script_result_text(r: runner.RunResult, json_mode: bool) -> str:
    """A script's run as a tool result (compact JSON, keys in this order):
    {"exit_code", "output", "written"} in JSON mode, {"exit_code", "stdout",
    "stderr", "written"} in plain mode; written relative to /workspace."""
    written = sorted(w.removeprefix("/workspace/") for w in r.written)
    if json_mode:
        return _compact({"exit_code": r.exit_code, "output": r.output, "written": written})
    return _compact({"exit_code": r.exit_code, "stdout": r.stdout, "stderr": r.stderr, "written": written})


class SkillTools:
    """The prompt block and the skill tools for one client (one identity).

    run_skill_script runs a skill's script on this machine (see
    skillsvc.runner) with these options: ``sandbox`` ("auto": bubblewrap
    where it runs, else a plain subprocess and a warning; "bwrap"; "none"; or
    a Sandbox), ``cache_dir`` for materialized skills, ``interpreters``
    ({".py": "/path/to/python"}), ``network`` (off). ``scripts=False`` does
    not offer it (and run refuses it).

    use_skill runs a code skill's skill.py (see skillsvc.codeskills) only with
    ``trust_code=True``, the caller's statement that the skills this identity
    sees are code it trusts to run here (confined as scripts are); its
    context offers ``tools`` (name to a function of the arguments dict, or
    a LangChain tool) and ``model`` (a function of a prompt, or a LangChain
    chat model). Without it, use_skill returns the skill's instructions and
    says the code was not run. ``use_skill=False`` does not offer it.
    ``code_timeout`` overrides the skill's timeout for code skills.

    ``provenance=True`` ends each load_skill result with the skill's trust
    line (``trust_line``: signature, scan verdict, who published it), at
    the cost of a GetSkill call per load; off by default, so the prompt
    and the results carry only the skill unless the caller asks.
    """

    def __init__(
        self,
        client: Client,
        *,
        scripts: bool = True,
        use_skill: bool = True,
        trust_code: bool = False,
        tools: Mapping[str, Any] | None = None,
        model: Any = None,
        sandbox: str | runner.Sandbox = "auto",
        cache_dir: str | os.PathLike[str] | None = None,
        interpreters: Mapping[str, str] | None = None,
        network: bool = False,
        code_timeout: float | None = None,
        provenance: bool = False,
    ) -> None:
        self.client = client
        self.provenance = provenance
        self.scripts = scripts
        self.use_skill = use_skill
        self.trust_code = trust_code
        self.tools = dict(tools or {})
        self.model = model
        self.sandbox = sandbox
        self.cache_dir = cache_dir
        self.interpreters = dict(interpreters or {})
        self.network = network
        self.code_timeout = code_timeout

    def _offered(self) -> list[dict[str, Any]]:
        offered = [LOAD_SKILL, READ_SKILL_FILE]
        if self.scripts:
            offered.append(RUN_SKILL_SCRIPT)
        if self.use_skill:
            offered.append(USE_SKILL)
        return offered

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
        load_skill as the way to use a skill, then run_skill_script and
        use_skill where they are offered. query is the task or the user's
        latest message, cut to max_query_bytes (the server's
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
        text = r.text + "\n\nTo use a skill, call load_skill with its name first, then follow its instructions."
        if self.scripts:
            text += " Run a script the instructions name with run_skill_script; files it writes appear in /workspace."
        if self.use_skill and self.trust_code:
            text += " A code skill (one with skill.py) runs with use_skill, which returns its result."
        return text

    def definitions(self, style: Style = "anthropic") -> list[dict[str, Any]]:
        return [definition(t, style) for t in self._offered()]

    def handles(self, name: str) -> bool:
        return any(t["name"] == name for t in self._offered())

    def run(self, name: str, arguments: dict[str, Any] | str) -> str:
        """Runs a tool call and returns the text for the tool result. A
        failure is text too ("Error (NOT_FOUND): ..."), so the model can
        correct itself."""
        args = json.loads(arguments) if isinstance(arguments, str) else dict(arguments)
        try:
            if name == LOAD_SKILL["name"]:
                text = self.client.render_skill(args["skill"], arguments=args.get("arguments", "")).text
                if self.provenance and (got := self.client.get_skill(args["skill"])).HasField("provenance"):
                    text = text.rstrip("\n") + "\n\n" + trust_line(got.provenance)
                return text
            if name == READ_SKILL_FILE["name"]:
                return self.client.read_skill_file(args["skill"], args["path"]).content
            if name == RUN_SKILL_SCRIPT["name"] and self.scripts:
                return self._run_skill_script(args)
            if name == USE_SKILL["name"] and self.use_skill:
                return self._use_skill(args)
        except runner.ScriptError as err:
            return script_error_text(err)
        except SkillsvcError as err:
            return f"Error ({err.code.name}): {err.message}"
        except KeyError as err:
            return f"Error (INVALID_ARGUMENT): missing argument {err.args[0]!r}"
        raise ValueError(f"{name} is not a skills tool")

    def _run_skill_script(self, args: dict[str, Any]) -> str:
        skill, script = args["skill"], args["script"]
        if "args" in args and "json_args" in args:
            return "Error (INVALID_ARGUMENT): pass args or json_args, not both"
        plain = args.get("args", [])
        if not isinstance(plain, list) or not all(isinstance(a, str) for a in plain):
            return "Error (INVALID_ARGUMENT): args must be a list of strings"
        seconds = args.get("timeout_seconds", 0)
        if isinstance(seconds, bool) or not isinstance(seconds, int) or not 0 <= seconds <= MAX_TIMEOUT_SECONDS:
            return f"Error (INVALID_ARGUMENT): timeout_seconds must be a whole number from 0 to {MAX_TIMEOUT_SECONDS}"
        options: dict[str, Any] = {
            "timeout": float(seconds) if seconds else None,
            "network": self.network,
            "sandbox": self.sandbox,
            "interpreters": self.interpreters,
            "cache_dir": self.cache_dir,
        }
        json_mode = "json_args" in args
        if json_mode:
            options["json_args"] = args["json_args"]
        else:
            options["args"] = plain
        r = runner.run_script(self.client, skill, script, **options)
        return script_result_text(r, json_mode)

    def _use_skill(self, args: dict[str, Any]) -> str:
        skill, text = args["skill"], args.get("arguments", "")
        given = args.get("input", {})
        if not isinstance(given, dict):
            return "Error (INVALID_ARGUMENT): input must be an object"
        if not isinstance(text, str):
            return "Error (INVALID_ARGUMENT): arguments must be a string"
        if not codeskills.is_code_skill(self.client.get_skill(skill)):
            return self.client.render_skill(skill, arguments=text).text
        if not self.trust_code:
            instructions = self.client.render_skill(skill, arguments=text).text.rstrip("\n")
            return (
                instructions + "\n\n(This is a code skill: its skill.py was not run, because this agent does not trust code "
                "skills (SkillTools(trust_code=False)); follow the instructions above instead.)"
            )
        r = codeskills.run_code_skill(
            self.client,
            skill,
            input=given,
            arguments=text,
            tools=self.tools,
            model=self.model,
            timeout=self.code_timeout,
            network=self.network,
            sandbox=self.sandbox,
            interpreters=self.interpreters,
            cache_dir=self.cache_dir,
        )
        return r.to_json()
