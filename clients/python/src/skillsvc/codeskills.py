"""Code skills: a skill folder with ``skill.py`` beside its SKILL.md.

A code skill's ``skill.py`` defines one class with an ``execute(self, ctx)``
method (plain or ``async``), which may call the agent's tools and model
through ``ctx`` and returns its result::

    from skillsvc_skill import CodeSkill, SkillResult   # optional: a plain class works too

    class Summarize(CodeSkill):
        def execute(self, ctx):
            text = ctx.tools.call("read_file", {"path": ctx.input["path"]})
            summary = ctx.model.complete("Summarize:\\n" + text)
            open("summary.md", "w").write(summary)       # the scratch /workspace
            return SkillResult(success=True, output={"summary": summary}, metadata={"chars": len(text)})

``execute`` returns a dict or an object with the fields ``success``,
``output`` (any JSON value), ``error`` (a string or None) and ``metadata`` (a
dict); a missing ``success`` means "no error". The context holds ``input``
(use_skill's input object), ``arguments`` (its text), ``skill``,
``instructions`` (the SKILL.md body), ``metadata`` (the frontmatter's),
``skill_dir``, ``workspace``, ``tools`` (``call(name, arguments)``,
``names``) and ``model`` (``complete(prompt, **options)``; ``llm`` is the
same); ``acall``/``acomplete`` are their awaitable forms. A failed bridge
call raises ``skillsvc_skill.BridgeError`` (``kind``: UNKNOWN_TOOL,
TOOL_FAILED, NO_MODEL, MODEL_FAILED) in the skill.

Nothing here runs a skill's code in this process: ``run_code_skill`` runs a
small harness in a subprocess under the script runner's sandbox (bubblewrap
where it runs: no network, the skill read-only at /skill, a scratch copy of
the thread's /workspace written back afterwards, the skill's timeout, output
and memory caps). The harness and this process talk through a JSON bridge:
one JSON object per line over two pipes (fds the child inherits, apart from
its stdout and stderr, which stay the skill's own). The harness asks
(``{"id": 1, "method": "tool", "name": ..., "arguments": {...}}`` or
``{"id": 2, "method": "model", "prompt": ..., "options": {...}}``), this
side calls the caller's functions and answers (``{"id": 1, "result": ...}``
or ``{"id": 1, "error": ..., "kind": ...}``), and the harness ends with
``{"method": "result", "result": {...}}`` or ``{"method": "error", ...}``.
Whatever goes wrong (no class, an exception, a malformed message, too much
output, the timeout) ends as a ``CodeSkillResult`` with ``success`` False
and an ``error`` that starts with its kind; nothing waits past the timeout.
"""

from __future__ import annotations

import asyncio
import dataclasses
import inspect
import json
import os
import select
import signal
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from . import runner
from .errors import FailedPrecondition, InvalidArgument

# The file that makes a skill a code skill.
SKILL_PY = "skill.py"
# How much of stdout, stderr or a traceback a failed result keeps.
TAIL_BYTES = 4096

# Runs inside the sandbox, under the skill's interpreter, as `python3 -I -B
# -c HARNESS <skill.py> <read fd> <write fd>`: standalone (the skillsvc
# package is not there), for any Python 3.8+.
HARNESS = r'''
import asyncio, dataclasses, importlib.util, inspect, json, os, sys, traceback, types


class BridgeError(Exception):
    """A bridge call the host refused or that failed there."""

    def __init__(self, kind, message):
        super().__init__(message)
        self.kind = kind
        self.message = message


@dataclasses.dataclass
class SkillResult:
    success: bool = True
    output: object = None
    error: object = None
    metadata: dict = dataclasses.field(default_factory=dict)


class CodeSkill:
    """An optional base class: execute(self, ctx) is what counts."""

    def __init__(self, metadata=None, instructions=""):
        self.metadata = metadata or {}
        self.instructions = instructions

    def execute(self, ctx):
        raise NotImplementedError("a code skill's class defines execute(self, ctx)")


class _Bridge:
    def __init__(self, rfd, wfd):
        # Not passed on to processes the skill starts: the bridge ends
        # when this process does.
        os.set_inheritable(rfd, False)
        os.set_inheritable(wfd, False)
        self._r = os.fdopen(rfd, "rb")
        self._w = os.fdopen(wfd, "wb")
        self._id = 0

    def send(self, msg):
        self._w.write(json.dumps(msg, separators=(",", ":"), allow_nan=False).encode() + b"\n")
        self._w.flush()

    def recv(self):
        line = self._r.readline()
        if not line:
            raise BridgeError("BRIDGE_CLOSED", "the host closed the bridge")
        return json.loads(line)

    def call(self, method, **fields):
        self._id += 1
        try:
            line = json.dumps(dict(id=self._id, method=method, **fields), separators=(",", ":"), allow_nan=False)
        except (TypeError, ValueError) as e:
            raise TypeError("a %s call's arguments must be JSON: %s" % (method, e)) from None
        self._w.write(line.encode() + b"\n")
        self._w.flush()
        reply = self.recv()
        if not isinstance(reply, dict) or reply.get("id") != self._id:
            raise BridgeError("BAD_BRIDGE_MESSAGE", "the host answered out of turn")
        if "error" in reply:
            raise BridgeError(reply.get("kind") or "TOOL_FAILED", str(reply["error"]))
        return reply.get("result")


class Tools:
    def __init__(self, bridge, names):
        self._bridge = bridge
        self.names = list(names)

    def __contains__(self, name):
        return name in self.names

    def call(self, name, arguments=None, **kwargs):
        args = dict(arguments or {}, **kwargs)
        return self._bridge.call("tool", name=name, arguments=args)

    async def acall(self, name, arguments=None, **kwargs):
        return self.call(name, arguments, **kwargs)


class Model:
    def __init__(self, bridge, available):
        self._bridge = bridge
        self.available = available

    def complete(self, prompt, **options):
        return self._bridge.call("model", prompt=prompt, options=options)

    __call__ = complete

    async def acomplete(self, prompt, **options):
        return self.complete(prompt, **options)


class SkillContext:
    def __init__(self, bridge, c):
        self.input = c.get("input") or {}
        self.arguments = c.get("arguments") or ""
        self.skill = c.get("skill") or ""
        self.instructions = c.get("instructions") or ""
        self.metadata = c.get("metadata") or {}
        self.skill_dir = os.environ.get("SKILL_DIR", "")
        self.workspace = os.environ.get("WORKSPACE", os.getcwd())
        self.tools = Tools(bridge, c.get("tools") or [])
        self.model = Model(bridge, bool(c.get("model")))
        self.llm = self.model


def _tail(text):
    return text[-4096:]


def _skill_class(module):
    found = [c for c in vars(module).values()
             if inspect.isclass(c) and c.__module__ == module.__name__ and callable(getattr(c, "execute", None))]
    if len(found) > 1:
        found = [c for c in found if issubclass(c, CodeSkill)] or found
    if not found:
        raise BridgeError("NO_SKILL_CLASS", "skill.py defines no class with an execute(self, ctx) method")
    if len(found) > 1:
        names = ", ".join(sorted(c.__name__ for c in found))
        raise BridgeError("NO_SKILL_CLASS", "skill.py defines more than one class with execute(self, ctx): " + names)
    return found[0]


def _result(value):
    if isinstance(value, dict):
        get = value.get
    elif all(hasattr(value, k) for k in ("success", "output")):
        def get(k, default=None):
            return getattr(value, k, default)
    else:
        raise BridgeError("BAD_RESULT", "execute returned %s, not a dict or an object with success, output, error "
                          "and metadata" % type(value).__name__)
    error = get("error", None)
    metadata = get("metadata", None) or {}
    if not isinstance(metadata, dict):
        raise BridgeError("BAD_RESULT", "the result's metadata is %s, not a dict" % type(metadata).__name__)
    success = get("success", None)
    out = {
        "success": (error is None) if success is None else bool(success),
        "output": get("output", None),
        "error": None if error is None else str(error),
        "metadata": metadata,
    }
    try:
        json.dumps(out, allow_nan=False)
    except (TypeError, ValueError) as e:
        raise BridgeError("BAD_RESULT", "the result is not JSON: %s" % e) from None
    return out


async def _await(x):
    return await x


def main():
    skill_py, rfd, wfd = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    bridge = _Bridge(rfd, wfd)
    mod = types.ModuleType("skillsvc_skill")
    mod.BridgeError, mod.CodeSkill, mod.SkillContext, mod.SkillResult = BridgeError, CodeSkill, SkillContext, SkillResult
    sys.modules["skillsvc_skill"] = mod
    sys.path.insert(0, os.path.dirname(skill_py))
    try:
        ctx = SkillContext(bridge, bridge.recv().get("context") or {})
        spec = importlib.util.spec_from_file_location("skill", skill_py)
        module = importlib.util.module_from_spec(spec)
        sys.modules["skill"] = module
        try:
            spec.loader.exec_module(module)
        except BaseException as e:
            raise BridgeError("LOAD_FAILED", "importing skill.py raised %s: %s" % (type(e).__name__, e)) from e
        cls = _skill_class(module)
        try:
            inspect.signature(cls).bind(metadata=None, instructions="")
            takes = True
        except (TypeError, ValueError):
            takes = False
        obj = cls(metadata=ctx.metadata, instructions=ctx.instructions) if takes else cls()
        value = obj.execute(ctx)
        if inspect.isawaitable(value):
            value = asyncio.run(_await(value))
        bridge.send({"method": "result", "result": _result(value)})
    except BridgeError as e:
        bridge.send({"method": "error", "kind": e.kind, "message": e.message[:4096], "traceback": _tail(traceback.format_exc())})
    except BaseException as e:
        bridge.send({"method": "error", "kind": "EXCEPTION", "message": ("%s: %s" % (type(e).__name__, e))[:4096],
                     "traceback": _tail(traceback.format_exc())})
    # The last word is said: threads the skill left running do not hold the run.
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)


main()
'''

# The kinds a bridge error reply carries, raised as BridgeError in the skill.
UNKNOWN_TOOL = "UNKNOWN_TOOL"
TOOL_FAILED = "TOOL_FAILED"
NO_MODEL = "NO_MODEL"
MODEL_FAILED = "MODEL_FAILED"


@dataclass
class CodeSkillResult:
    """What a code skill's run came to. A failed run has success False and
    an error starting with its kind (``TIMEOUT: ...``); its metadata then
    holds the tails of stdout, stderr and the traceback that there were.
    ``written`` lists the workspace paths (relative to /workspace) written
    back."""

    success: bool
    output: Any = None
    error: str | None = None
    metadata: dict[str, Any] = field(default_factory=dict)
    written: list[str] = field(default_factory=list)
    sandbox: str = ""

    def to_json(self) -> str:
        """The tool result use_skill returns: compact JSON, keys success,
        output, error, metadata, written."""
        body = {"success": self.success, "output": self.output, "error": self.error, "metadata": self.metadata, "written": self.written}
        return json.dumps(body, separators=(",", ":"), ensure_ascii=False, default=str)


def is_code_skill(skill: Any) -> bool:
    """Whether a GetSkillResponse is a code skill's: its manifest (or, for a
    skill over the manifest limits, its file list) holds skill.py at the
    folder's top."""
    s = skill.skill
    top = s.path.rstrip("/") + "/" + SKILL_PY
    return any(f.path == top for f in s.manifest.files) or any(f.path == SKILL_PY for f in skill.files)


def _tail(data: bytes | str) -> str:
    text = data.decode("utf-8", "replace") if isinstance(data, bytes) else data
    raw = text.encode()
    return raw[-TAIL_BYTES:].decode("utf-8", "ignore") if len(raw) > TAIL_BYTES else text


def _failed(kind: str, message: str, *, stdout: bytes = b"", stderr: bytes = b"", traceback: str = "", sandbox: str = "") -> CodeSkillResult:
    meta = {k: v for k, v in (("stdout", _tail(stdout)), ("stderr", _tail(stderr)), ("traceback", _tail(traceback))) if v}
    return CodeSkillResult(False, None, f"{kind}: {message}", meta, [], sandbox)


def _timeout_of(metadata: Mapping[str, str], timeout: float | None) -> float:
    """The run's timeout: the caller's, else the frontmatter's
    metadata.timeout, else 60 s (as the script runner decides)."""
    if timeout is not None:
        if not 0 < timeout < float("inf"):
            raise InvalidArgument(f"timeout must be a positive number of seconds, not {timeout!r}")
        return float(timeout)
    try:
        t = float(metadata.get("timeout", runner.DEFAULT_TIMEOUT))
    except ValueError:
        return runner.DEFAULT_TIMEOUT
    return t if 0 < t < float("inf") else runner.DEFAULT_TIMEOUT


def _call_tool(fn: Any, arguments: dict[str, Any]) -> Any:
    """A tool as the caller gave it: a function of the arguments dict, or
    an object with invoke (a LangChain tool)."""
    value = fn.invoke(arguments) if hasattr(fn, "invoke") else fn(arguments)
    return _settle(value)


def _call_model(model: Any, prompt: Any, options: dict[str, Any]) -> Any:
    """The model as the caller gave it: a function of the prompt (a string
    or a list of messages) and options, or a LangChain chat model (invoke,
    whose message's content is the answer)."""
    if hasattr(model, "invoke"):
        value = _settle(model.invoke(prompt, **options))
        return getattr(value, "content", value)
    return _settle(model(prompt, **options))


def _settle(value: Any) -> Any:
    if inspect.isawaitable(value):

        async def wait() -> Any:
            return await value

        return asyncio.run(wait())
    return value


class _Killed(Exception):
    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind
        self.message = message


class _Host:
    """This side of the bridge for one run: reads the harness's lines,
    answers tool and model calls, and keeps its last word."""

    def __init__(
        self,
        rfd: int,
        wfd: int,
        deadline: float,
        max_line: int,
        tools: Mapping[str, Any],
        model: Any,
        over: threading.Event,
    ) -> None:
        self.rfd, self.wfd = rfd, wfd
        self.deadline, self.max_line = deadline, max_line
        self.tools, self.model, self.over = tools, model, over
        self.outcome: dict[str, Any] | None = None

    def left(self) -> float:
        return self.deadline - time.monotonic()

    def send(self, msg: Mapping[str, Any]) -> None:
        data = json.dumps(msg, separators=(",", ":"), default=str).encode() + b"\n"
        while data:
            if self.left() <= 0:
                raise _Killed("TIMEOUT", "")
            _, ready, _ = select.select([], [self.wfd], [], min(self.left(), 0.5))
            if self.over.is_set():
                raise _Killed("OUTPUT_TOO_LARGE", "")
            if not ready:
                continue
            try:
                n = os.write(self.wfd, data)
            except BlockingIOError:
                continue
            except BrokenPipeError:
                return  # the harness is gone: its end shows on the read side
            data = data[n:]

    def serve(self) -> None:
        buf = b""
        while True:
            if self.left() <= 0:
                raise _Killed("TIMEOUT", "")
            ready, _, _ = select.select([self.rfd], [], [], min(self.left(), 0.5))
            if self.over.is_set():
                raise _Killed("OUTPUT_TOO_LARGE", "")
            if not ready:
                continue
            chunk = os.read(self.rfd, 65536)
            if not chunk:
                if buf.strip():
                    raise _Killed("BAD_BRIDGE_MESSAGE", "the bridge's last message has no line end")
                return
            buf += chunk
            *lines, buf = buf.split(b"\n")
            for line in lines:
                if len(line) > self.max_line:
                    raise _Killed("OUTPUT_TOO_LARGE", f"a bridge message passed {self.max_line} bytes")
                if line.strip():
                    self.handle(line)
                if self.outcome is not None:
                    return  # the harness exits now; a process it left behind is killed with the group
            if len(buf) > self.max_line:
                raise _Killed("OUTPUT_TOO_LARGE", f"a bridge message passed {self.max_line} bytes")

    def handle(self, line: bytes) -> None:
        try:
            msg = json.loads(line)
        except ValueError:
            raise _Killed("BAD_BRIDGE_MESSAGE", f"a bridge line is not JSON: {_tail(line[:200])!r}") from None
        if not isinstance(msg, dict):
            raise _Killed("BAD_BRIDGE_MESSAGE", f"a bridge message is {type(msg).__name__}, not an object")
        method = msg.get("method")
        if method in ("result", "error"):
            self.outcome = msg
            return
        if method not in ("tool", "model") or not isinstance(msg.get("id"), int) or isinstance(msg.get("id"), bool):
            raise _Killed("BAD_BRIDGE_MESSAGE", f"a bridge message with method {method!r} and id {msg.get('id')!r}: want tool or model with an integer id")
        if method == "tool":
            name, args = msg.get("name"), msg.get("arguments", {})
            if not isinstance(name, str) or not isinstance(args, dict):
                raise _Killed("BAD_BRIDGE_MESSAGE", "a tool call needs a name (string) and arguments (object)")
            if name not in self.tools:
                offered = ", ".join(sorted(self.tools)) or "none"
                self.send({"id": msg["id"], "kind": UNKNOWN_TOOL, "error": f"no tool named {name!r} is offered to code skills here (tools: {offered})"})
                return
            fn = self.tools[name]
            self.answer(msg["id"], lambda: _call_tool(fn, args), TOOL_FAILED, f"tool {name!r}")
            return
        if self.model is None:
            self.send({"id": msg["id"], "kind": NO_MODEL, "error": "no model is offered to code skills here"})
            return
        prompt, options = msg.get("prompt"), msg.get("options", {})
        if not isinstance(prompt, (str, list)) or not isinstance(options, dict):
            raise _Killed("BAD_BRIDGE_MESSAGE", "a model call needs a prompt (string or list of messages) and options (object)")
        model = self.model
        self.answer(msg["id"], lambda: _call_model(model, prompt, options), MODEL_FAILED, "the model")

    def answer(self, id_: int, call: Callable[[], Any], kind: str, what: str) -> None:
        """Runs a caller's function in a thread of its own, so the timeout
        holds while it runs (a function still running then is left to end by
        itself), and sends its value or its error."""
        box: dict[str, Any] = {}
        done = threading.Event()

        def work() -> None:
            try:
                box["value"] = call()
            except Exception as e:  # the caller's function: any failure goes back to the skill
                box["error"] = f"{what} failed: {type(e).__name__}: {e}"
            finally:
                done.set()

        threading.Thread(target=work, daemon=True).start()
        while not done.wait(min(max(self.left(), 0), 0.5)):
            if self.left() <= 0:
                raise _Killed("TIMEOUT", "")
            if self.over.is_set():
                raise _Killed("OUTPUT_TOO_LARGE", "")
        if "error" in box:
            self.send({"id": id_, "kind": kind, "error": box["error"]})
            return
        try:
            json.dumps(box["value"], allow_nan=False, default=str)
        except ValueError as e:
            self.send({"id": id_, "kind": kind, "error": f"{what} returned a value that is not JSON: {e}"})
            return
        self.send({"id": id_, "result": box["value"]})


def run_code_skill(
    client: Any,
    skill: str,
    *,
    input: Mapping[str, Any] | None = None,
    arguments: str = "",
    tools: Mapping[str, Any] | None = None,
    model: Any = None,
    timeout: float | None = None,
    max_output_bytes: int = runner.DEFAULT_MAX_OUTPUT_BYTES,
    memory_bytes: int = runner.DEFAULT_MEMORY_BYTES,
    network: bool = False,
    sandbox: str | runner.Sandbox = "auto",
    workspace: bool = True,
    interpreters: Mapping[str, str] | None = None,
    version: str = "",
    cache_dir: str | os.PathLike[str] | None = None,
) -> CodeSkillResult:
    """Runs a code skill's skill.py (see the module doc) and returns its
    result. The caller decides to trust the code: SkillTools does only with
    trust_code=True. Service errors (NotFound), a skill without skill.py
    (FailedPrecondition) and the runner's errors before the run
    (SandboxUnavailable, WorkspaceTooLarge, UnknownInterpreter) raise; what
    goes wrong in the run is a result with success False."""
    box = runner.choose_sandbox(sandbox)
    if not isinstance(box, (runner.BwrapSandbox, runner.SubprocessSandbox)):
        raise InvalidArgument(f"code skills run under sandbox 'bwrap' or 'none' (their bridge needs a local process), not {box.name!r}")
    got = client.get_skill(skill, version=version)
    mat = runner.materialize(client, skill, version=version, cache_dir=cache_dir)
    skill_py = mat.path / SKILL_PY
    if not skill_py.is_file():
        raise FailedPrecondition(f"skill {mat.name!r} has no {SKILL_PY}: it is not a code skill; use load_skill")
    python = runner.interpreter_for(skill_py, interpreters)[0]
    limit = _timeout_of(mat.metadata, timeout)
    context = {
        "input": dict(input or {}),
        "arguments": arguments,
        "skill": mat.name,
        "instructions": got.body,
        "metadata": dict(mat.metadata),
        "tools": sorted(tools or {}),
        "model": model is not None,
    }
    scratch = Path(tempfile.mkdtemp(prefix="skillsvc-code-"))
    try:
        before = runner._pull_workspace(client, scratch) if workspace else {}
        (scratch / runner.HOME_DIR).mkdir(exist_ok=True)
        skill_seen, ws_seen = box.paths(str(mat.path), str(scratch))
        env = {
            "PATH": runner.SCRIPT_PATH,
            "HOME": os.path.join(ws_seen, runner.HOME_DIR),
            "LANG": "C.UTF-8",
            "SKILL_DIR": skill_seen,
            "WORKSPACE": ws_seen,
            "SKILL_TIMEOUT": f"{limit:g}",
            "PWD": ws_seen,
        }
        spec = runner.CommandSpec(
            argv=[python, "-I", "-B", "-c", HARNESS, os.path.join(skill_seen, SKILL_PY)],
            env=env,
            skill_dir=str(mat.path),
            workspace_dir=str(scratch),
            network=network,
            timeout=limit,
            max_output_bytes=max_output_bytes,
            memory_bytes=memory_bytes,
            runtime_dirs=runner._runtime_dirs(python),
        )
        res, ended = _run(box, spec, dict(tools or {}), model, context)
        res.sandbox = box.name
        if ended and workspace:
            # The run ended by itself: what it wrote is its work, as for scripts.
            try:
                written = runner._push_workspace(client, scratch, before, "", "", 0)
            except runner.WorkspaceTooLarge as e:
                return _failed("WORKSPACE_TOO_LARGE", e.message, sandbox=box.name)
            res.written = [w.removeprefix("/workspace/") for w in written]
        return res
    finally:
        runner._remove(scratch, scratch.parent)


def _run(
    box: runner.BwrapSandbox | runner.SubprocessSandbox,
    spec: runner.CommandSpec,
    tools: Mapping[str, Any],
    model: Any,
    context: dict[str, Any],
) -> tuple[CodeSkillResult, bool]:
    """Starts the harness in a new process group with the bridge's fds,
    serves the bridge until the harness ends, the timeout, too much output
    or a malformed message, then kills the group. Also says whether the
    harness ended by itself (not killed)."""
    # The bridge: the child writes requests to req_w and reads answers from
    # resp_r, fds it inherits (bwrap passes inherited fds on); each is
    # closed here once, by this list.
    req_r, req_w = os.pipe()
    resp_r, resp_w = os.pipe()
    open_fds = [req_r, req_w, resp_r, resp_w]

    def close(fd: int) -> None:
        if fd in open_fds:
            open_fds.remove(fd)
            os.close(fd)

    try:
        spec = dataclasses.replace(spec, argv=[*spec.argv, str(resp_r), str(req_w)])
        if isinstance(box, runner.BwrapSandbox):
            argv, cwd = box.argv(spec), None
        else:
            argv, cwd = spec.argv, spec.workspace_dir
        argv, preexec = runner._limited(argv, spec.memory_bytes)
        deadline = time.monotonic() + spec.timeout
        proc = subprocess.Popen(
            argv,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            cwd=cwd,
            env=spec.env,
            start_new_session=True,
            pass_fds=(req_w, resp_r),
            preexec_fn=preexec,
        )
        # Only the child holds its ends now: its exit closes the bridge.
        close(req_w)
        close(resp_r)
        os.set_blocking(resp_w, False)
        return _serve(proc, spec, deadline, req_r, resp_w, tools, model, context)
    finally:
        for fd in list(open_fds):
            close(fd)


def _serve(
    proc: subprocess.Popen[bytes],
    spec: runner.CommandSpec,
    deadline: float,
    rfd: int,
    wfd: int,
    tools: Mapping[str, Any],
    model: Any,
    context: dict[str, Any],
) -> tuple[CodeSkillResult, bool]:
    over = threading.Event()

    def kill() -> None:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass

    def drain(stream: Any, out: bytearray) -> None:
        while chunk := stream.read1(65536):
            room = spec.max_output_bytes - len(out)
            out += chunk[: max(room, 0)]
            if len(chunk) > room:
                over.set()
                kill()
                break
        stream.close()

    stdout, stderr = bytearray(), bytearray()
    threads = [threading.Thread(target=drain, args=(s, b), daemon=True) for s, b in ((proc.stdout, stdout), (proc.stderr, stderr))]
    for t in threads:
        t.start()
    host = _Host(rfd, wfd, deadline, spec.max_output_bytes, tools, model, over)
    killed: _Killed | None = None
    code: int | None = None
    try:
        host.send({"context": context})
        host.serve()
        try:
            code = proc.wait(max(host.left(), 0))
        except subprocess.TimeoutExpired:
            raise _Killed("TIMEOUT", "") from None
        if over.is_set():
            raise _Killed("OUTPUT_TOO_LARGE", "")
    except _Killed as k:
        killed = k
    finally:
        kill()
        proc.wait()
        for t in threads:
            t.join(runner._DRAIN_GRACE)
    out, err = bytes(stdout), bytes(stderr)
    if killed is not None:
        message = killed.message or {
            "TIMEOUT": f"the code skill ran past its timeout of {spec.timeout:g}s and was killed with its children",
            "OUTPUT_TOO_LARGE": f"the code skill wrote more than {spec.max_output_bytes} bytes to stdout or stderr and was killed",
        }[killed.kind]
        return _failed(killed.kind, message, stdout=out, stderr=err), False
    o = host.outcome
    if o is None:
        return _failed("EXITED", f"the code skill's process exited with {code} before returning a result", stdout=out, stderr=err), True
    if o["method"] == "error":
        kind, message = o.get("kind"), o.get("message")
        if not isinstance(kind, str) or not isinstance(message, str):
            return _failed("BAD_BRIDGE_MESSAGE", "an error message without a kind and a message (strings)", stdout=out, stderr=err), True
        tb = o.get("traceback") if isinstance(o.get("traceback"), str) else ""
        return _failed(kind[:64], message[:TAIL_BYTES], stdout=out, stderr=err, traceback=tb), True
    r = o.get("result")
    if (
        not isinstance(r, dict)
        or not isinstance(r.get("success"), bool)
        or not isinstance(r.get("error"), (str, type(None)))
        or not isinstance(r.get("metadata"), dict)
    ):
        return _failed("BAD_BRIDGE_MESSAGE", "a result without success (bool), error (string or null) and metadata (object)", stdout=out, stderr=err), True
    return CodeSkillResult(r["success"], r.get("output"), r["error"], r["metadata"]), True


__all__ = ["HARNESS", "SKILL_PY", "CodeSkillResult", "is_code_skill", "run_code_skill"]
