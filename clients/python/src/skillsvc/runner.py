"""Skill scripts run where the agent runs: materialize and run_script.

skillsvc stores skills and never runs them. ``materialize`` puts a skill's
files in a local cache directory named for its manifest digest, verified file
by file against the manifest; ``run_script`` runs one of its scripts with the
seeds' contract (JSON in argv[1] and on stdin, one JSON object out; or plain
arguments), a timeout, output and memory caps, in a scratch copy of the
thread's /workspace whose new and changed files are written back afterwards.
``run_command`` runs a shell command (``bash -c``) the same way, with the
skills it names seen read-only at /skills/<folder>: the Deep Agents
backend's ``execute``.

A run goes through a ``Sandbox``: ``BwrapSandbox`` (bubblewrap: no network,
no view of the host beyond the skill read-only, the scratch workspace and the
interpreter's runtime, a new PID namespace) or ``SubprocessSandbox`` (a plain
subprocess in its own process group). A remote sandbox (E2B, Modal, a
Kubernetes job) implements the same protocol.

The cache trusts the atomic rename that published a directory, and checks
every file's size and executable bit (and that no file was added or removed)
each time it is used: a directory that fails the check is removed and
fetched again. A
change that keeps a file's size is not caught; the files are read-only
(chmod a-w) so that takes a deliberate act.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import math
import os
import re
import resource
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import threading
import time
import uuid
import warnings
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import grpc

from .errors import (
    Aborted,
    DeadlineExceeded,
    FailedPrecondition,
    InvalidArgument,
    NotFound,
    ResourceExhausted,
    SkillsvcError,
)

DEFAULT_TIMEOUT = 60.0
DEFAULT_MAX_OUTPUT_BYTES = 1 << 20
DEFAULT_MEMORY_BYTES = 1 << 30
MAX_WORKSPACE_BYTES = 64 << 20
MAX_WORKSPACE_FILES = 2000
SCRIPT_PATH = "/usr/local/bin:/usr/bin:/bin"
# Where BwrapSandbox shows the skill and the scratch workspace.
SANDBOX_SKILL_DIR = "/skill"
SANDBOX_WORKSPACE_DIR = "/workspace"
# The scratch directory's home for the script, never written back.
HOME_DIR = ".home"

INTERPRETERS: dict[str, str] = {".py": "python3", ".js": "node", ".mjs": "node", ".cjs": "node", ".sh": "bash"}

# Host paths an interpreter needs, bound read-only when they exist; nothing
# else of the host (no /etc/passwd, /home, /root, /tmp) is visible.
_BWRAP_RO_TRY = [
    "/bin",
    "/lib",
    "/lib64",
    "/lib32",
    "/etc/alternatives",
    "/etc/ssl",
    "/etc/ca-certificates",
    "/etc/resolv.conf",
    "/etc/hosts",
    "/etc/localtime",
]
# Roots an interpreter may live under without an extra bind.
_BOUND_ROOTS = ("/usr", "/bin", "/lib", "/lib64", "/lib32")


# Errors: each names what went wrong so a model can act on it, and carries
# the output there was.


class ScriptError(SkillsvcError):
    """A script run that failed, with the output it produced (if any)."""

    def __init__(
        self, message: str, *, stdout: str = "", stderr: str = "", exit_code: int | None = None, written: Sequence[str] = ()
    ) -> None:
        super().__init__(message)
        self.stdout = stdout
        self.stderr = stderr
        self.exit_code = exit_code
        # Workspace paths written back before the error (BadOutput only).
        self.written = list(written)


class ScriptNotFound(ScriptError, NotFound):
    code = grpc.StatusCode.NOT_FOUND


class ScriptOutsideSkill(ScriptError, InvalidArgument):
    code = grpc.StatusCode.INVALID_ARGUMENT


class UnknownInterpreter(ScriptError, FailedPrecondition):
    code = grpc.StatusCode.FAILED_PRECONDITION


class BadOutput(ScriptError, FailedPrecondition):
    """In JSON mode, stdout was not exactly one JSON object."""

    code = grpc.StatusCode.FAILED_PRECONDITION


class ScriptTimeout(ScriptError, DeadlineExceeded):
    """The run outlived its timeout; its process group was killed."""

    code = grpc.StatusCode.DEADLINE_EXCEEDED


class OutputTooLarge(ScriptError, ResourceExhausted):
    """stdout or stderr passed max_output_bytes; the run was killed."""

    code = grpc.StatusCode.RESOURCE_EXHAUSTED


class WorkspaceTooLarge(ScriptError, ResourceExhausted):
    code = grpc.StatusCode.RESOURCE_EXHAUSTED


class SandboxUnavailable(ScriptError, FailedPrecondition):
    # Not UNAVAILABLE: retrying does not help until bubblewrap is installed
    # (or another sandbox chosen), which is FAILED_PRECONDITION's meaning.
    code = grpc.StatusCode.FAILED_PRECONDITION


class ManifestMismatch(Aborted):
    """An export that does not match the manifest GetSkill gave (the skill
    changed between the two calls, or the bytes were damaged): nothing is
    kept, and a retry usually succeeds."""


# Materializing.


@dataclass(frozen=True)
class Materialized:
    """A skill's files in the local cache. ``fetched`` is False when the
    directory was there already (``bytes`` is then 0)."""

    path: Path
    name: str
    manifest_digest: str
    metadata: dict[str, str]
    fetched: bool
    bytes: int
    # The skill's folder in the library, e.g. "/skills/docs/pdf".
    folder: str = ""


def cache_root() -> Path:
    """$SKILLSVC_SKILL_CACHE, else $XDG_CACHE_HOME/skillsvc/skills, else ~/.cache/skillsvc/skills."""
    if root := os.environ.get("SKILLSVC_SKILL_CACHE"):
        return Path(root)
    if xdg := os.environ.get("XDG_CACHE_HOME"):
        return Path(xdg) / "skillsvc" / "skills"
    return Path.home() / ".cache" / "skillsvc" / "skills"


def materialize(client: Any, skill: str, *, version: str = "", cache_dir: str | os.PathLike[str] | None = None) -> Materialized:
    """The skill's files in <cache>/<hex of its manifest digest>/, fetched
    with ExportSkill only when that directory is not there yet (or fails its
    size and mode check). Every file's size, sha256 and executable bit is
    checked against the manifest, and no file may be missing or extra, before
    the directory is
    published by an atomic rename; a mismatch raises ManifestMismatch and
    keeps nothing. client is a Client (or anything with its get_skill and
    export_skill)."""
    s = client.get_skill(skill, version=version).skill
    m = s.manifest
    if m.over_limits or not s.manifest_digest:
        raise FailedPrecondition(
            f"skill {s.name!r} is over the manifest limits ({m.file_count} files, {m.total_bytes} bytes; "
            "at most 512 files and 16 MiB): it cannot be materialized to run its scripts"
        )
    prefix = s.path.rstrip("/") + "/"
    want = {f.path[len(prefix) :]: (f.size, f.sha256, f.mode) for f in m.files if f.path.startswith(prefix)}
    if len(want) != len(m.files):
        raise ManifestMismatch(f"the manifest of {s.name!r} lists files outside its folder {s.path}")
    root = Path(cache_dir) if cache_dir is not None else cache_root()
    digest = s.manifest_digest.removeprefix("sha256:")
    if not re.fullmatch(r"[0-9a-f]{64}", digest):
        raise ManifestMismatch(f"skill {s.name!r} has a manifest digest that is not sha256 hex: {s.manifest_digest!r}")
    dest = root / digest
    meta = dict(s.metadata)
    if dest.is_dir():
        if _sizes_match(dest, want):
            return Materialized(dest, s.name, s.manifest_digest, meta, False, 0, s.path)
        _remove(dest, root)
    root.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(dir=root, prefix=".fetch-"))
    try:
        folder = client.export_skill(skill, tmp, version=version)
        _verify(folder, want, s.name)
        _read_only(folder)
        _publish(folder, dest)
    finally:
        _remove(tmp, root)
    return Materialized(dest, s.name, s.manifest_digest, meta, True, m.total_bytes, s.path)


def _publish(folder: Path, dest: Path) -> None:
    """Renames a verified folder into place; another thread's copy of the
    same content that got there first is as good."""
    try:
        os.rename(folder, dest)
    except OSError:
        if not dest.is_dir():
            raise


def _files(folder: Path) -> dict[str, os.stat_result]:
    out = {}
    for dirpath, _dirs, names in os.walk(folder):
        for name in names:
            p = Path(dirpath) / name
            out[p.relative_to(folder).as_posix()] = p.lstat()
    return out


def _sizes_match(folder: Path, want: Mapping[str, tuple[int, str, int]]) -> bool:
    have = _files(folder)
    return have.keys() == want.keys() and all(
        stat.S_ISREG(st.st_mode) and st.st_size == want[k][0] and _mode_matches(st, want[k][2]) for k, st in have.items()
    )


def _mode_matches(st: os.stat_result, mode: int) -> bool:
    """The file is executable exactly when the manifest says so; a manifest
    without modes (a thread pinned before they were recorded) says nothing.
    Only the executable bit counts: the cached copy is read-only."""
    return mode == 0 or bool(st.st_mode & 0o111) == bool(mode & 0o111)


def _verify(folder: Path, want: Mapping[str, tuple[int, str, int]], name: str) -> None:
    have = _files(folder)
    if extra := sorted(have.keys() - want.keys()):
        raise ManifestMismatch(f"the export of {name!r} holds files its manifest does not list: {extra[:5]}; retry")
    if missing := sorted(want.keys() - have.keys()):
        raise ManifestMismatch(f"the export of {name!r} lacks files its manifest lists: {missing[:5]}; retry")
    for rel, (size, sha, mode) in want.items():
        p = folder / rel
        data = p.read_bytes()
        if len(data) != size or hashlib.sha256(data).hexdigest() != sha:
            raise ManifestMismatch(f"the export of {name!r} has {rel} with other content than its manifest lists; retry")
        if not _mode_matches(have[rel], mode):
            raise ManifestMismatch(
                f"the export of {name!r} has {rel} with mode {stat.S_IMODE(have[rel].st_mode):#o}, its manifest lists {mode:#o}; retry"
            )


def _read_only(folder: Path) -> None:
    for dirpath, _dirs, names in os.walk(folder):
        for name in names:
            p = os.path.join(dirpath, name)
            os.chmod(p, stat.S_IMODE(os.lstat(p).st_mode) & ~0o222)


def _remove(path: Path, root: Path) -> None:
    """Removes a cache directory, its folders made writable first. Its files
    are left as they are (removing one needs only its folder writable): a
    skill set's files are hard links to the per-skill cache's, and a chmod
    would change both."""
    if not path.exists():
        return
    aside = root / f".remove-{uuid.uuid4().hex}"
    try:
        os.rename(path, aside)
    except OSError:
        aside = path
    for dirpath, dirs, _names in os.walk(aside):
        os.chmod(dirpath, 0o700)
        for name in dirs:
            p = os.path.join(dirpath, name)
            if not os.path.islink(p):
                os.chmod(p, 0o700)
    shutil.rmtree(aside, ignore_errors=True)


# Sandboxes.


@dataclass(frozen=True)
class CommandSpec:
    """A prepared run. argv and env name the skill and workspace as the
    sandbox shows them (``Sandbox.paths``); skill_dir and workspace_dir are
    where they are on this machine. skill_dir is "" for a command (no skill
    at /skill); mounts are (host dir, path seen) pairs a sandbox that
    ``binds`` shows read-only at those paths."""

    argv: list[str]
    env: dict[str, str]
    skill_dir: str
    workspace_dir: str
    network: bool
    timeout: float
    max_output_bytes: int
    memory_bytes: int
    stdin: bytes = b""
    # Host directories the interpreter needs besides /usr and friends.
    runtime_dirs: tuple[str, ...] = ()
    mounts: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class CommandResult:
    exit_code: int | None
    stdout: bytes
    stderr: bytes
    timed_out: bool
    truncated: bool


class Sandbox(Protocol):
    """Runs prepared commands. ``name`` is reported in RunResult.sandbox.
    A sandbox whose class sets ``binds = True`` shows the workspace at
    /workspace and each of spec.mounts at its path; for one that does not,
    run_command rewrites those paths in the command to the host's."""

    name: str

    def paths(self, skill_dir: str, workspace_dir: str) -> tuple[str, str]:
        """Where the command sees the skill and the workspace."""
        ...

    def run(self, spec: CommandSpec) -> CommandResult: ...


class SubprocessSandbox:
    """A plain subprocess in its own process group (start_new_session), with
    RLIMIT_AS set; the skill's files are read-only by mode only, and the
    script sees the whole host: use where bubblewrap is not available."""

    name = "none"
    binds = False

    def paths(self, skill_dir: str, workspace_dir: str) -> tuple[str, str]:
        return skill_dir, workspace_dir

    def run(self, spec: CommandSpec) -> CommandResult:
        return _run_group(spec.argv, spec, cwd=spec.workspace_dir)


class BwrapSandbox:
    """bubblewrap: every namespace unshared (no network unless the spec
    allows it, a new PID namespace), the host's /usr and the few files
    interpreters need read-only, the skill read-only at /skill and the
    scratch workspace at /workspace."""

    name = "bwrap"
    binds = True

    def __init__(self, bwrap: str | None = None) -> None:
        # By absolute path: the command's env has only the script's PATH.
        self.bwrap = bwrap or shutil.which("bwrap") or "bwrap"

    def paths(self, skill_dir: str, workspace_dir: str) -> tuple[str, str]:
        return SANDBOX_SKILL_DIR, SANDBOX_WORKSPACE_DIR

    def argv(self, spec: CommandSpec) -> list[str]:
        argv = [self.bwrap, "--unshare-all"]
        if spec.network:
            argv.append("--share-net")
        argv += ["--die-with-parent", "--new-session", "--ro-bind", "/usr", "/usr"]
        for p in _BWRAP_RO_TRY:
            argv += ["--ro-bind-try", p, p]
        argv += ["--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp"]
        for d in spec.runtime_dirs:
            argv += ["--ro-bind", d, d]
        if spec.skill_dir:
            argv += ["--ro-bind", spec.skill_dir, SANDBOX_SKILL_DIR]
        for host, seen in spec.mounts:
            argv += ["--ro-bind", host, seen]
        argv += ["--bind", spec.workspace_dir, SANDBOX_WORKSPACE_DIR]
        argv += ["--chdir", SANDBOX_WORKSPACE_DIR, "--", *spec.argv]
        return argv

    def run(self, spec: CommandSpec) -> CommandResult:
        return _run_group(self.argv(spec), spec, cwd=None)


# Seconds to wait for the output pipes once the command's group is killed.
_DRAIN_GRACE = 5.0

_probe_lock = threading.Lock()
_probe: bool | None = None
_warned = False


def bwrap_available() -> bool:
    """Whether bubblewrap runs here (Linux, installed, namespaces allowed):
    probed once per process."""
    global _probe
    with _probe_lock:
        if _probe is None:
            _probe = False
            bwrap = shutil.which("bwrap")
            if sys.platform.startswith("linux") and bwrap:
                argv = [bwrap, "--unshare-all", "--die-with-parent", "--ro-bind", "/usr", "/usr"]
                for p in _BWRAP_RO_TRY:
                    argv += ["--ro-bind-try", p, p]
                try:
                    done = subprocess.run([*argv, "--", "true"], capture_output=True, timeout=30, env={"PATH": SCRIPT_PATH})
                    _probe = done.returncode == 0
                except (OSError, subprocess.SubprocessError):
                    pass
        return _probe


def choose_sandbox(sandbox: str | Sandbox = "auto") -> Sandbox:
    """"auto": bwrap where it runs, else none with one warning per process;
    "bwrap" raises SandboxUnavailable where it does not run; "none"; or a
    Sandbox of your own."""
    global _warned
    if not isinstance(sandbox, str):
        return sandbox
    if sandbox == "none":
        return SubprocessSandbox()
    if sandbox == "bwrap":
        if not bwrap_available():
            raise SandboxUnavailable("sandbox 'bwrap' asked for, but bubblewrap is not available here (install bubblewrap, on Linux)")
        return BwrapSandbox()
    if sandbox != "auto":
        raise InvalidArgument(f"sandbox must be 'auto', 'bwrap', 'none' or a Sandbox, not {sandbox!r}")
    if bwrap_available():
        return BwrapSandbox()
    if not _warned:
        _warned = True
        warnings.warn("skill scripts run unconfined: bubblewrap not available", RuntimeWarning, stacklevel=3)
    return SubprocessSandbox()


def _limited(argv: list[str], memory_bytes: int) -> tuple[list[str], Any]:
    """argv under RLIMIT_AS: through prlimit(1) where it is installed, as a
    preexec_fn is not safe in a process with threads (gRPC has some), else
    with setrlimit in the child before exec."""
    if memory_bytes <= 0:
        return argv, None
    if prlimit := shutil.which("prlimit", path=SCRIPT_PATH):
        return [prlimit, f"--as={memory_bytes}", "--", *argv], None

    def apply() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (memory_bytes, memory_bytes))

    return argv, apply


def _run_group(argv: list[str], spec: CommandSpec, cwd: str | None) -> CommandResult:
    """Runs argv in a new process group; kills the whole group on timeout,
    on output past the cap, and when the command ends (so no child outlives
    the run)."""
    argv, preexec = _limited(argv, spec.memory_bytes)
    proc = subprocess.Popen(
        argv,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=cwd,
        env=spec.env,
        start_new_session=True,
        preexec_fn=preexec,
    )
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

    def feed() -> None:
        try:
            proc.stdin.write(spec.stdin)  # type: ignore[union-attr]
        except (BrokenPipeError, OSError):
            pass
        finally:
            try:
                proc.stdin.close()  # type: ignore[union-attr]
            except OSError:
                pass

    stdout, stderr = bytearray(), bytearray()
    threads = [
        threading.Thread(target=drain, args=(proc.stdout, stdout), daemon=True),
        threading.Thread(target=drain, args=(proc.stderr, stderr), daemon=True),
        threading.Thread(target=feed, daemon=True),
    ]
    for t in threads:
        t.start()
    timed_out = False
    try:
        proc.wait(spec.timeout)
    except subprocess.TimeoutExpired:
        timed_out = True
    kill()
    code = proc.wait()
    if code < 0:  # ended by a signal: reported as a shell (and bwrap) does
        code = 128 - code
    # The pipes close when the group is gone; a process that left the group
    # (setsid, only possible without bwrap) may keep them open: not waited for.
    for t in threads:
        t.join(_DRAIN_GRACE)
    truncated = over.is_set()
    return CommandResult(None if timed_out or truncated else code, bytes(stdout), bytes(stderr), timed_out, truncated)


# Running.


@dataclass
class RunResult:
    exit_code: int
    stdout: str
    stderr: str
    # The parsed JSON object, in JSON mode.
    output: dict[str, Any] | None
    # Workspace paths (/workspace/...) written back.
    written: list[str] = field(default_factory=list)
    sandbox: str = ""
    duration: float = 0.0


_UNSET: Any = object()


def resolve_script(skill_dir: str | os.PathLike[str], script: str) -> Path:
    """The script's path inside skill_dir: "scripts/x.py" as given, "x.py"
    under scripts/ first, then the skill's root. Absolute paths, "..", and
    symlinks that leave the skill raise ScriptOutsideSkill; a missing file
    ScriptNotFound."""
    root = Path(skill_dir).resolve()
    if not script:
        raise ScriptNotFound("no script named: give a path such as 'scripts/run.py'")
    parts = script.split("/")
    # A backslash is a Windows separator, a NUL no file's name: both refused, as Go and TypeScript do.
    if script.startswith("/") or ".." in parts or "\\" in script or "\0" in script or re.match(r"[A-Za-z]:", script):
        raise ScriptOutsideSkill(f"script {script!r} is not a relative path inside the skill: name one as 'scripts/x.py' or 'x.py'")
    candidates = [root / script] if "/" in script else [root / "scripts" / script, root / script]
    for c in candidates:
        if not c.exists() and not c.is_symlink():
            continue
        real = c.resolve()
        if real != root and root not in real.parents:
            raise ScriptOutsideSkill(f"script {script!r} links outside the skill folder")
        if real.is_file():
            return real
    raise ScriptNotFound(f"skill has no script {script!r} (looked in {', '.join(str(c.relative_to(root)) for c in candidates)})")


def interpreter_for(script: Path, interpreters: Mapping[str, str] | None = None) -> list[str]:
    """The command that runs script, before its path: by extension (the
    interpreters map first), else the shebang's interpreter, else [] for an
    executable binary; UnknownInterpreter otherwise."""
    ext = script.suffix.lower()
    table = {**INTERPRETERS, **{(k if k.startswith(".") else "." + k).lower(): v for k, v in (interpreters or {}).items()}}
    if ext in table:
        return [_which(table[ext], script)]
    with open(script, "rb") as f:
        head = f.read(256)
    if head.startswith(b"#!"):
        words = head[2:].split(b"\n", 1)[0].decode("utf-8", "replace").split()
        if words:
            if os.path.basename(words[0]) == "env" and len(words) > 1:
                # env X, or env -S X -flags: the flags are the interpreter's.
                words = words[2:] if words[1] == "-S" else words[1:]
            if words:
                return [_which(words[0], script), *words[1:]]
    # A text file without a shebang cannot be exec'd, whatever its mode
    # (the server marks every file under scripts/ executable).
    if head.startswith(b"\x7fELF") and script.stat().st_mode & 0o111:
        return []
    raise UnknownInterpreter(
        f"no interpreter known for {script.name}: name it .py, .js, .mjs, .cjs or .sh, start it with a #! line, "
        "or pass interpreters={extension: path}"
    )


def _which(name: str, script: Path) -> str:
    if "/" in name:
        found = name if os.access(name, os.X_OK) else None
    else:  # the script's PATH, then the caller's
        found = shutil.which(name, path=SCRIPT_PATH) or shutil.which(name)
    if not found:
        raise UnknownInterpreter(f"interpreter {name!r} for {script.name} is not installed (looked in {SCRIPT_PATH} and PATH)")
    return found


def _runtime_dirs(interpreter: str) -> tuple[str, ...]:
    """Host directories an interpreter outside /usr needs inside bwrap: its
    install root (the parent of its bin/), and for a Python venv the base
    interpreter's root too."""
    roots: list[str] = []

    def add(path: str) -> None:
        p = Path(path)
        root = p.parent.parent if p.parent.name == "bin" else p.parent
        r = str(root)
        if not any(r == b or r.startswith(b + "/") for b in _BOUND_ROOTS) and r not in roots and r != "/":
            roots.append(r)
        cfg = root / "pyvenv.cfg"
        if cfg.is_file():
            for line in cfg.read_text(errors="replace").splitlines():
                key, _, value = line.partition("=")
                if key.strip() == "home" and value.strip():
                    add(os.path.join(value.strip(), "python3"))

    add(interpreter)
    add(os.path.realpath(interpreter))
    return tuple(roots)


def run_script(
    client: Any,
    skill: str,
    script: str,
    *,
    json_args: Any = _UNSET,
    args: Sequence[str] | None = None,
    timeout: float | None = None,
    max_output_bytes: int = DEFAULT_MAX_OUTPUT_BYTES,
    memory_bytes: int = DEFAULT_MEMORY_BYTES,
    network: bool = False,
    sandbox: str | Sandbox = "auto",
    workspace: bool = True,
    interpreters: Mapping[str, str] | None = None,
    version: str = "",
    cache_dir: str | os.PathLike[str] | None = None,
) -> RunResult:
    """Runs a skill's script (see the module doc). JSON mode (json_args
    given): argv [interp, script, <json>], the same JSON on stdin, and stdout
    must be one JSON object (RunResult.output) else BadOutput. Plain mode:
    argv [interp, script, *args], stdout/stderr/exit code as they are. A
    non-zero exit is returned, not raised."""
    if json_args is not _UNSET and args is not None:
        raise InvalidArgument("pass json_args or args, not both")
    if args is not None and (isinstance(args, str) or not all(isinstance(a, str) for a in args)):
        raise InvalidArgument("args must be a list of strings")
    box = choose_sandbox(sandbox)
    mat = materialize(client, skill, version=version, cache_dir=cache_dir)
    path = resolve_script(mat.path, script)
    interp = interpreter_for(path, interpreters)
    if timeout is None:
        timeout = skill_timeout(mat.metadata)
    else:
        timeout = _checked_timeout(timeout)
    with _scratch(client, workspace, "skillsvc-run-") as (_top, scratch, before):
        skill_seen, ws_seen = box.paths(str(mat.path), str(scratch))
        script_seen = os.path.join(skill_seen, path.relative_to(mat.path.resolve()).as_posix())
        env = {**_env(ws_seen), "SKILL_DIR": skill_seen, "SKILL_TIMEOUT": str(math.ceil(timeout))}
        argv = [*interp, script_seen]
        stdin = b""
        if json_args is not _UNSET:
            text = json.dumps(json_args)
            argv.append(text)
            stdin = text.encode()
        else:
            argv += list(args or ())
        spec = CommandSpec(
            argv=argv,
            env=env,
            skill_dir=str(mat.path),
            workspace_dir=str(scratch),
            network=network,
            timeout=timeout,
            max_output_bytes=max_output_bytes,
            memory_bytes=memory_bytes,
            stdin=stdin,
            runtime_dirs=_runtime_dirs(interp[0]) if interp else (),
        )
        # A run that ended is written back before its output is judged: it
        # is the script's work, whatever it printed.
        done = _run_and_write_back(client, box, spec, scratch, before, workspace)
    if done.timed_out:
        raise ScriptTimeout(f"script {script!r} ran past its timeout of {timeout:g}s and was killed with its children", stdout=done.stdout, stderr=done.stderr)
    if done.truncated:
        raise OutputTooLarge(
            f"script {script!r} wrote more than {max_output_bytes} bytes to stdout or stderr and was killed; the first bytes are kept",
            stdout=done.stdout,
            stderr=done.stderr,
        )
    assert done.exit_code is not None
    output = None
    if json_args is not _UNSET:
        try:
            output = json.loads(done.stdout, parse_constant=_not_json)
        except ValueError:
            output = None
        if not isinstance(output, dict):
            raise BadOutput(
                f"script {script!r} exited with {done.exit_code} and did not print exactly one JSON object on stdout",
                stdout=done.stdout,
                stderr=done.stderr,
                exit_code=done.exit_code,
                written=done.written,
            )
    return RunResult(done.exit_code, done.stdout, done.stderr, output, done.written, box.name, done.duration)


@dataclass
class CommandRun:
    """A command's run. exit_code is None when it was killed: timed_out
    (past its timeout) or truncated (stdout or stderr past the cap; the
    first bytes are kept). A killed run writes nothing back."""

    exit_code: int | None
    stdout: str
    stderr: str
    timed_out: bool = False
    truncated: bool = False
    # Workspace paths (/workspace/...) written back.
    written: list[str] = field(default_factory=list)
    sandbox: str = ""
    duration: float = 0.0


# A folder a command may see a skill at: /skills/<folder>, one or more
# plain names below /skills.
_SKILL_MOUNT = re.compile(r"/skills(/[A-Za-z0-9_.@+-]+)+")
# /workspace or /skills where a command's text names them (not inside a
# longer path or name): the plain subprocess rewrites them to local paths.
_SEEN_ROOTS = re.compile(r"(?<![\w.~/$-])/(workspace|skills)(?=/|$|[^\w.-])")
# What a rewritten command can carry unquoted in any shell context.
_PLAIN_PATH = re.compile(r"[A-Za-z0-9_./-]+")


def skill_timeout(metadata: Mapping[str, str]) -> float:
    """A skill's own timeout: its metadata "timeout" in decimal seconds
    ("120", "1.5"; no sign, exponent or unit, as every runner reads it),
    else DEFAULT_TIMEOUT."""
    v = metadata.get("timeout", "").strip()
    if not re.fullmatch(r"[0-9]+(\.[0-9]+)?", v) or not 0 < float(v) < float("inf"):
        return DEFAULT_TIMEOUT
    return float(v)


def run_command(
    client: Any,
    command: str,
    *,
    skills: Mapping[str, str | os.PathLike[str]] | None = None,
    timeout: float | None = None,
    max_output_bytes: int = DEFAULT_MAX_OUTPUT_BYTES,
    memory_bytes: int = DEFAULT_MEMORY_BYTES,
    network: bool = False,
    sandbox: str | Sandbox = "auto",
    workspace: bool = True,
) -> CommandRun:
    """Runs ``bash -c command`` with run_script's limits and sandbox, in a
    scratch copy of the thread's /workspace seen at /workspace, whose new
    and changed files are written back when it ends. skills maps a folder
    the command sees (``/skills/docs/pdf``) to a local directory
    (materialize's), shown read-only there. A sandbox that binds (bwrap)
    mounts them at those paths; for the plain subprocess, /workspace and
    /skills where the command's text names them are rewritten to local
    directories (paths inside the scripts it runs are not: use $WORKSPACE,
    the working directory, or paths given as arguments). Timeouts and
    output past the cap are reported (CommandRun.timed_out, .truncated),
    not raised."""
    if not isinstance(command, str) or not command.strip():
        raise InvalidArgument("command must be a non-empty string")
    timeout = DEFAULT_TIMEOUT if timeout is None else _checked_timeout(timeout)
    mounts: dict[str, Path] = {}
    for seen, host in (skills or {}).items():
        if not _SKILL_MOUNT.fullmatch(seen) or any(part in (".", "..") for part in seen.split("/")):
            raise InvalidArgument(f"a skill is seen at /skills/<folder>, not at {seen!r}")
        if any(seen.startswith(other + "/") or other.startswith(seen + "/") for other in mounts):
            raise InvalidArgument(f"skill folders {seen!r} and {sorted(mounts)} overlap")
        if not Path(host).is_dir():
            raise InvalidArgument(f"the directory for {seen} is not there: {host}")
        mounts[seen] = Path(host)
    box = choose_sandbox(sandbox)
    bash = shutil.which("bash", path=SCRIPT_PATH)
    if not bash:
        raise UnknownInterpreter(f"bash is not installed (looked in {SCRIPT_PATH})")
    with _scratch(client, workspace, "skillsvc-cmd-") as (top, scratch, before):
        if getattr(box, "binds", False):
            _skill_seen, ws_seen = box.paths("", str(scratch))
            if ws_seen != SANDBOX_WORKSPACE_DIR:
                raise SandboxUnavailable(f"sandbox {box.name!r} binds, but shows the workspace at {ws_seen}, not {SANDBOX_WORKSPACE_DIR}")
        else:
            # The skills in a tree of links beside the scratch workspace, so
            # one rewrite of /skills covers them all.
            for seen, host in mounts.items():
                link = top / seen.lstrip("/")
                link.parent.mkdir(parents=True, exist_ok=True)
                link.symlink_to(host)
            local = {"workspace": str(scratch), "skills": str(top / "skills")}
            if not _PLAIN_PATH.fullmatch(str(top)):
                raise SandboxUnavailable(f"the scratch directory {top} has characters a rewritten command cannot carry: set TMPDIR to a plain path")
            command = _SEEN_ROOTS.sub(lambda m: local[m.group(1)], command)
            ws_seen = str(scratch)
        spec = CommandSpec(
            argv=[bash, "-c", command],
            env=_env(ws_seen),
            skill_dir="",
            workspace_dir=str(scratch),
            network=network,
            timeout=timeout,
            max_output_bytes=max_output_bytes,
            memory_bytes=memory_bytes,
            mounts=tuple((str(host), seen) for seen, host in mounts.items()),
        )
        return _run_and_write_back(client, box, spec, scratch, before, workspace)


def _not_json(name: str) -> Any:
    """NaN and Infinity are Python's, not JSON's: the other runners refuse them."""
    raise ValueError(f"{name} is not JSON")


def _checked_timeout(timeout: float) -> float:
    if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or not 0 < timeout < float("inf"):
        raise InvalidArgument(f"timeout must be a positive number of seconds, not {timeout!r}")
    return float(timeout)


def _env(ws_seen: str) -> dict[str, str]:
    """The fixed environment every run starts from (nothing of the host's)."""
    return {
        "PATH": SCRIPT_PATH,
        "HOME": os.path.join(ws_seen, HOME_DIR),
        "LANG": "C.UTF-8",
        "WORKSPACE": ws_seen,
        # bwrap's --chdir sets PWD whatever the env says: every sandbox gets it.
        "PWD": ws_seen,
    }


@contextmanager
def _scratch(client: Any, workspace: bool, prefix: str) -> Iterator[tuple[Path, Path, dict[str, str]]]:
    """A temporary directory holding the scratch workspace (its "workspace"
    folder, a copy of the thread's /workspace unless workspace is False,
    with the run's home folder); yields (directory, workspace, the copied
    files' sha256 by path) and removes it all afterwards."""
    top = Path(tempfile.mkdtemp(prefix=prefix))
    try:
        scratch = top / "workspace"
        scratch.mkdir()
        before = _pull_workspace(client, scratch) if workspace else {}
        (scratch / HOME_DIR).mkdir(exist_ok=True)
        yield top, scratch, before
    finally:
        _remove(top, top.parent)


def _run_and_write_back(client: Any, box: Sandbox, spec: CommandSpec, scratch: Path, before: Mapping[str, str], workspace: bool) -> CommandRun:
    """Runs spec in box and, unless it was killed, writes back what it
    created or changed in the workspace."""
    start = time.monotonic()
    res = box.run(spec)
    duration = time.monotonic() - start
    out = res.stdout.decode("utf-8", "replace")
    err = res.stderr.decode("utf-8", "replace")
    written: list[str] = []
    if workspace and res.exit_code is not None and not res.timed_out and not res.truncated:
        written = _push_workspace(client, scratch, before, out, err, res.exit_code)
    return CommandRun(res.exit_code, out, err, res.timed_out, res.truncated, written, box.name, duration)


def _pull_workspace(client: Any, scratch: Path) -> dict[str, str]:
    """Downloads the thread's /workspace into scratch; returns each file's
    sha256 by relative path."""
    entries: list[Any] = []
    dirs = ["/workspace"]
    total = 0
    while dirs:
        d = dirs.pop()
        token = ""
        while True:
            try:
                page = client.list(d, page_token=token)
            except NotFound:
                break
            for e in page.entries:
                if e.is_dir:
                    dirs.append(e.path)
                    continue
                entries.append(e)
                total += e.size
                if len(entries) > MAX_WORKSPACE_FILES or total > MAX_WORKSPACE_BYTES:
                    raise WorkspaceTooLarge(
                        f"the thread's /workspace holds more than {MAX_WORKSPACE_FILES} files or {MAX_WORKSPACE_BYTES} bytes: "
                        "too large to copy for a script run; remove files or run with workspace=False"
                    )
            if not (token := page.next_page_token):
                break
    sums = {}
    for e in entries:
        rel = e.path[len("/workspace/") :]
        data = client.download(e.path)
        dest = scratch / rel
        dest.parent.mkdir(parents=True, exist_ok=True)
        dest.write_bytes(data)
        sums[rel] = hashlib.sha256(data).hexdigest()
    return sums


def _push_workspace(client: Any, scratch: Path, before: Mapping[str, str], out: str, err: str, code: int) -> list[str]:
    """Writes back every regular file created or changed under scratch
    (symlinks and .home/ are left behind); all or nothing past the size cap."""
    changed: list[tuple[str, bytes]] = []
    total = 0
    for dirpath, dirs, names in os.walk(scratch):
        if Path(dirpath) == scratch and HOME_DIR in dirs:
            dirs.remove(HOME_DIR)
        for name in sorted(names):
            p = os.path.join(dirpath, name)
            try:
                fd = os.open(p, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
            except OSError:
                continue  # a symlink or unreadable: not written back
            with os.fdopen(fd, "rb") as f:
                if not stat.S_ISREG(os.fstat(f.fileno()).st_mode):
                    continue
                data = f.read(MAX_WORKSPACE_BYTES + 1 - total)
            rel = Path(p).relative_to(scratch).as_posix()
            if before.get(rel) == hashlib.sha256(data).hexdigest():
                continue
            total += len(data)
            if total > MAX_WORKSPACE_BYTES:
                raise WorkspaceTooLarge(
                    f"the script wrote more than {MAX_WORKSPACE_BYTES} bytes to its workspace: nothing was written back",
                    stdout=out,
                    stderr=err,
                    exit_code=code,
                )
            changed.append((rel, data))
    written = []
    for rel, data in sorted(changed):
        client.upload("/workspace/" + rel, data)
        written.append("/workspace/" + rel)
    return written


class _SyncCalls:
    """AsyncClient's calls made synchronous for the runner's thread: each
    runs on the client's event loop."""

    def __init__(self, client: Any, loop: asyncio.AbstractEventLoop) -> None:
        self._client = client
        self._loop = loop

    def __getattr__(self, name: str) -> Any:
        method = getattr(self._client, name)

        def call(*args: Any, **kwargs: Any) -> Any:
            return asyncio.run_coroutine_threadsafe(method(*args, **kwargs), self._loop).result()

        return call


async def amaterialize(client: Any, skill: str, **kwargs: Any) -> Materialized:
    return await asyncio.to_thread(materialize, _SyncCalls(client, asyncio.get_running_loop()), skill, **kwargs)


async def arun_script(client: Any, skill: str, script: str, **kwargs: Any) -> RunResult:
    return await asyncio.to_thread(run_script, _SyncCalls(client, asyncio.get_running_loop()), skill, script, **kwargs)


async def arun_command(client: Any, command: str, **kwargs: Any) -> CommandRun:
    return await asyncio.to_thread(run_command, _SyncCalls(client, asyncio.get_running_loop()), command, **kwargs)
