"""Lists deepagents' backend tests, the cases tests/test_deepagents_contract.py
accounts for, one "file::[Class::]test" per line, under a header naming the
commit they were read from.

    python scripts/deepagents_cases.py <deepagents git dir or checkout> [rev] > tests/deepagents_cases.txt

The files are read with `git show`, so a bare mirror works; tests are found
by parsing (test functions, and test methods of Test classes), so deepagents'
own test dependencies are not needed.
"""

from __future__ import annotations

import ast
import subprocess
import sys

DIR = "libs/deepagents/tests/unit_tests/backends"
FILES = [
    "test_protocol.py",
    "test_store_backend.py",
    "test_store_backend_async.py",
    "test_state_backend.py",
    "test_state_backend_async.py",
    "test_filesystem_backend.py",
    "test_filesystem_backend_async.py",
    "test_glob_semantics.py",
    "test_file_format.py",
    "test_composite_backend.py",
    "test_composite_backend_async.py",
]


def git(repo: str, *args: str) -> str:
    return subprocess.run(["git", "-C", repo, *args], capture_output=True, text=True, check=True).stdout


def tests(source: str) -> list[str]:
    out = []
    for node in ast.parse(source).body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name.startswith("test"):
            out.append(node.name)
        elif isinstance(node, ast.ClassDef) and node.name.startswith("Test"):
            out += [
                f"{node.name}::{m.name}"
                for m in node.body
                if isinstance(m, (ast.FunctionDef, ast.AsyncFunctionDef)) and m.name.startswith("test")
            ]
    return out


def main() -> None:
    repo, rev = sys.argv[1], sys.argv[2] if len(sys.argv) > 2 else "HEAD"
    commit = git(repo, "rev-parse", rev).strip()
    version = next(
        (line.split('"')[1] for line in git(repo, "show", f"{commit}:libs/deepagents/pyproject.toml").splitlines() if line.startswith("version")),
        "?",
    )
    print(f"# langchain-ai/deepagents {commit} (libs/deepagents version {version}), {DIR}")
    for f in FILES:
        for t in tests(git(repo, "show", f"{commit}:{DIR}/{f}")):
            print(f"{f}::{t}")


if __name__ == "__main__":
    main()
