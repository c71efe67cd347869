"""skillsvc: a filesystem and skills library for AI agents, over gRPC.

    from skillsvc import Client
    with Client("127.0.0.1:7070", user="alice", thread="t1") as c:
        c.write("/workspace/plan.md", "# Plan\\n")
        print(c.format_skills().text)

SkillsvcBackend (skillsvc.deepagents) plugs it into LangChain Deep Agents;
skillsvc.tools has the prompt block and load_skill tool for plain SDK loops.
"""

from .client import DEFAULT_TARGET, MAX_QUERY_BYTES, AsyncClient, Client, Identity, Provenance, bounded_query, extract_skill, trust_line
from .errors import (
    Aborted,
    AlreadyExists,
    Cancelled,
    DeadlineExceeded,
    FailedPrecondition,
    Internal,
    InvalidArgument,
    NotFound,
    OutOfRange,
    PermissionDenied,
    ResourceExhausted,
    SkillsvcError,
    Unauthenticated,
    Unavailable,
)
from .runner import (
    BadOutput,
    BwrapSandbox,
    CommandResult,
    CommandSpec,
    ManifestMismatch,
    Materialized,
    OutputTooLarge,
    RunResult,
    Sandbox,
    SandboxUnavailable,
    ScriptError,
    ScriptNotFound,
    ScriptOutsideSkill,
    ScriptTimeout,
    SubprocessSandbox,
    UnknownInterpreter,
    WorkspaceTooLarge,
)
from .skillset import FolderCollision, MaterializedSet, SetMember

__all__ = [
    "BadOutput",
    "BwrapSandbox",
    "CommandResult",
    "CommandSpec",
    "FolderCollision",
    "ManifestMismatch",
    "Materialized",
    "MaterializedSet",
    "OutputTooLarge",
    "RunResult",
    "Sandbox",
    "SandboxUnavailable",
    "ScriptError",
    "ScriptNotFound",
    "ScriptOutsideSkill",
    "ScriptTimeout",
    "SetMember",
    "SubprocessSandbox",
    "UnknownInterpreter",
    "WorkspaceTooLarge",
    "DEFAULT_TARGET",
    "MAX_QUERY_BYTES",
    "Aborted",
    "AlreadyExists",
    "AsyncClient",
    "Cancelled",
    "Client",
    "DeadlineExceeded",
    "FailedPrecondition",
    "Identity",
    "Internal",
    "InvalidArgument",
    "NotFound",
    "OutOfRange",
    "PermissionDenied",
    "Provenance",
    "ResourceExhausted",
    "SkillsvcError",
    "Unauthenticated",
    "Unavailable",
    "bounded_query",
    "extract_skill",
    "trust_line",
]
