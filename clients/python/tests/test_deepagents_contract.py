"""deepagents' backend contract, held by SkillsvcBackend on the real binary.

Read from langchain-ai/deepagents at 23b83ad50f63d241d0069a3dc426d43b211adf2e
(tag deepagents==0.7.8 plus 45 commits): the backend tests in
libs/deepagents/tests/unit_tests/backends/ (protocol, store, state,
filesystem, glob semantics, file format, composite; sync and async). They
pass unchanged against deepagents 0.7.32, the version requirements-test.txt
pins, whose sources give the behaviour and messages matched here
(FilesystemBackend's where deepagents' backends differ).

Every upstream test is accounted for: a test here restates it, with the same
inputs and expected outcome (the code is ours), and names it with @upstream
(whose partial= says what of it does not hold here, and why); or
NOT_APPLICABLE says why it does not apply.
deepagents_cases.txt lists the upstream tests, and
test_every_upstream_case_is_accounted_for holds the two together.

Adapted throughout: paths live under /workspace, a thread's writable mount,
where upstream uses the backend's root ("/a.py" is "/workspace/a.py", a
search from "/" searches "/workspace"); files are made through the backend
(upload_files for raw bytes) where upstream writes them to disk or a store;
FilesystemBackend's two path modes are one here; the middleware's own root
folders (/large_tool_results/, ...) keep their names, which the backend
maps into the workspace. Each test runs on the sync and the async methods,
so a sync test and its async twin are one test.

To refresh: python scripts/deepagents_cases.py <deepagents checkout> [rev] >
tests/deepagents_cases.txt, bump deepagents in requirements-test.txt, run
this file, and restate or classify each case it reports unaccounted (and
drop the ones upstream removed).
"""

from __future__ import annotations

import base64
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from deepagents.backends.composite import CompositeBackend
from deepagents.backends.filesystem import FilesystemBackend
from deepagents.backends.protocol import (
    BackendProtocol,
    DeleteResult,
    EditResult,
    ReadResult,
    WriteResult,
    _method_accepts_max_count,
    _supports_delete,
)
from deepagents.backends.store import StoreBackend
from deepagents.backends.utils import EMPTY_CONTENT_WARNING
from deepagents.middleware.filesystem import FilesystemMiddleware
from langchain_core.messages import ToolMessage
from langgraph.store.memory import InMemoryStore

from skillsvc.deepagents import SkillsvcBackend

W = "/workspace"

COVERED: dict[str, str | None] = {}  # upstream case -> what of it does not hold (None: all holds)


def upstream(*cases: str, via: str | None = None, partial: str | None = None) -> Callable[[Any], Any]:
    """Names the upstream tests a test restates. ``via`` says how it reaches
    the same outcome another way (a public method for a private one);
    ``partial`` says which of their assertions does not hold here, and why."""
    del via  # documentation only

    def mark(fn: Any) -> Any:
        for case in cases:
            assert case not in COVERED, f"{case} restated twice"
            COVERED[case] = partial
        return fn

    return mark


# Upstream tests (or whole classes, ending in "::") that do not apply, and why.
_BASE_CLASS = "the bare BackendProtocol base class's defaults; SkillsvcBackend overrides every method (test_every_protocol_method_is_overridden)"
_FS_ENGINE = "FilesystemBackend's ripgrep subprocess or Python fallback, driven through patched internals; the outcomes they protect are restated through grep() below"
_FS_CLOCK = "FilesystemBackend's own glob wall-clock budget, patched; skillsvc bounds a glob by its scan budget and the caller's deadline (internal/vfs testGlobScanLimit, TestSearchStopsAtDeadline)"
_SYMLINKS = "symbolic links of a local filesystem; an object store has none"
_CONTEXT = "grep's context_lines, a FilesystemBackend-only argument outside BackendProtocol.grep"
_LEGACY = "StoreBackend/StateBackend's legacy list-of-lines content in their own storage"
_NAMESPACE = "StoreBackend's namespace factory; skillsvc scopes by the caller's identity (held by test_store_backend_namespace_isolation here)"
_SANDBOX = "the sandbox backend's remote glob script and its shell quoting, error codes and walk"
_STATE = "StateBackend's LangGraph state, outside a graph run"
_COMPOSITE = "CompositeBackend's own routing and merging, with in-memory or patched child backends; nothing in it depends on the default backend's type (the cases with a FilesystemBackend default run here with SkillsvcBackend as the default)"
_HELPER = "a helper of the in-memory backends (FileData, the include-glob cache); the grep and glob outcomes it feeds are restated through the backend"

NOT_APPLICABLE: dict[str, str] = {
    "test_protocol.py::TestBackendProtocolRaisesNotImplemented::": _BASE_CLASS,
    "test_protocol.py::TestSandboxBackendProtocolRaisesNotImplemented::": "SandboxBackendProtocol.execute; SkillsvcBackend runs no commands",
    "test_protocol.py::TestAsyncMethodsPropagateNotImplemented::": _BASE_CLASS,
    "test_protocol.py::TestAdditionalAsyncWrappersPropagateNotImplemented::": _BASE_CLASS,
    "test_protocol.py::TestSupportsDelete::test_false_when_not_overridden": _BASE_CLASS,
    "test_protocol.py::TestAgrepTimeout::": "the base class's agrep, which runs a sync grep in a thread under a timeout; SkillsvcBackend's agrep is native (grpc.aio) and bounded by the client's deadline",
    "test_protocol.py::TestMapFileOperationError::": "FilesystemBackend's mapping of OS exceptions; SkillsvcBackend maps gRPC codes to the same literals (test_filesystem_download_errors and the upload cases here)",
    "test_protocol.py::TestMethodAcceptsMaxCount::test_var_keyword_param_detected": "signatures of other backends (a **kwargs grep)",
    "test_protocol.py::TestMethodAcceptsMaxCount::test_missing_param_not_detected": "signatures of other backends (a grep without max_count)",
    "test_protocol.py::TestReadResultPaginationInvariants::": "ReadResult's own validation; every ReadResult SkillsvcBackend returns is built through it",
    "test_store_backend.py::test_store_backend_reads_mkv_as_binary_without_slicing": "contradicts test_filesystem_backend_reads_mkv_as_binary: StoreBackend returns the text stored under a .mkv path as written, FilesystemBackend (like skillsvc, which stores bytes) returns the file's bytes base64-encoded",
    "test_store_backend.py::test_store_backend_reads_legacy_list_content": _LEGACY,
    "test_store_backend.py::test_store_backend_rejects_legacy_lists_with_non_string_items": _LEGACY,
    "test_store_backend.py::test_store_backend_write_migrates_legacy_list_content": _LEGACY,
    "test_store_backend.py::test_store_backend_edit_migrates_legacy_list_content": _LEGACY,
    "test_store_backend.py::test_store_backend_namespace_user_scoped": _NAMESPACE,
    "test_store_backend.py::test_store_backend_namespace_multi_level": _NAMESPACE,
    "test_store_backend.py::test_store_backend_namespace_error_handling": _NAMESPACE,
    "test_store_backend.py::test_store_backend_namespace_is_required": _NAMESPACE,
    "test_store_backend.py::test_store_backend_runtime_reading_factory_outside_graph": _NAMESPACE,
    "test_store_backend.py::test_store_backend_arg_ignoring_factory_works_outside_graph": _NAMESPACE,
    "test_store_backend.py::test_store_backend_namespace_with_context": _NAMESPACE,
    "test_store_backend.py::TestValidateNamespace::": _NAMESPACE,
    "test_store_backend.py::test_store_backend_rejects_wildcard_namespace": _NAMESPACE,
    "test_store_backend.py::test_store_backend_delete_uses_single_batch_call": "how StoreBackend batches its store writes",
    "test_store_backend.py::test_store_backend_adelete_uses_single_batch_call": "how StoreBackend batches its store writes",
    "test_store_backend_async.py::test_store_backend_aread_supports_legacy_list_content": _LEGACY,
    "test_store_backend_async.py::test_store_backend_awrite_migrates_legacy_list_content": _LEGACY,
    "test_store_backend_async.py::test_store_backend_aedit_migrates_legacy_list_content": _LEGACY,
    "test_state_backend.py::test_state_backend_raises_outside_graph_context": _STATE,
    "test_state_backend.py::test_upload_files_raises_outside_graph_context": _STATE,
    "test_state_backend.py::test_state_backend_reads_legacy_list_content": _LEGACY,
    "test_state_backend.py::test_state_backend_reads_legacy_list_content_for_non_text_path": _LEGACY,
    "test_state_backend.py::test_state_backend_edit_migrates_legacy_list_content": _LEGACY,
    "test_state_backend_async.py::test_state_backend_raises_outside_graph_context_async": _STATE,
    "test_filesystem_backend.py::test_filesystem_backend_rejects_oversized_video_before_read": "patches FilesystemBackend's video size constant",
    "test_filesystem_backend.py::test_filesystem_backend_rejects_oversized_mkv_before_read": "patches FilesystemBackend's video size constant",
    "test_filesystem_backend.py::test_grep_preserves_symlink_path_in_results": _SYMLINKS,
    "test_filesystem_backend.py::test_grep_containment_check_blocks_escaping_symlink": _SYMLINKS,
    "test_filesystem_backend.py::test_resolve_ripgrep_logs_once_when_missing": _FS_ENGINE,
    "test_filesystem_backend.py::test_resolve_ripgrep_uses_resolved_path_in_argv": _FS_ENGINE,
    "test_filesystem_backend.py::test_ripgrep_timeout_logs_warning": _FS_ENGINE,
    "test_filesystem_backend.py::test_ripgrep_timeout_returns_partial_results_when_output_captured": _FS_ENGINE,
    "test_filesystem_backend.py::test_glob_times_out_and_flags_truncated": _FS_CLOCK,
    "test_filesystem_backend.py::test_glob_zero_match_still_honors_deadline": _FS_CLOCK,
    "test_filesystem_backend.py::test_glob_returns_matches_gathered_before_deadline": _FS_CLOCK,
    "test_filesystem_backend.py::test_glob_mid_iteration_oserror_is_error_not_truncated": "a local directory walk failing midway, patched",
    "test_filesystem_backend.py::test_glob_backend_budget_below_middleware_deadline": _FS_CLOCK,
    "test_filesystem_backend.py::test_ripgrep_exec_race_logs_warning_and_clears_cache": _FS_ENGINE,
    "test_filesystem_backend.py::test_ripgrep_nonzero_returncode_falls_back_with_warning": _FS_ENGINE,
    "test_filesystem_backend.py::test_ripgrep_nonzero_returncode_discards_partial_output": _FS_ENGINE,
    "test_filesystem_backend.py::test_ripgrep_drains_stderr_while_streaming_stdout": _FS_ENGINE,
    "test_filesystem_backend.py::test_ripgrep_streaming_caps_total_and_terminates": _FS_ENGINE,
    "test_filesystem_backend.py::test_ripgrep_streaming_below_cap_not_truncated": _FS_ENGINE,
    "test_filesystem_backend.py::test_ripgrep_streaming_exact_cap_not_truncated": _FS_ENGINE,
    "test_filesystem_backend.py::test_grep_python_fallback_survives_mid_iteration_failure": _FS_ENGINE,
    "test_filesystem_backend.py::test_grep_python_fallback_survives_runtime_error_mid_walk": _FS_ENGINE,
    "test_filesystem_backend.py::test_grep_virtual_mode_sanitizes_runtime_error_details": _FS_ENGINE,
    "test_filesystem_backend.py::test_grep_virtual_mode_sanitizes_oserror_path": _FS_ENGINE,
    "test_filesystem_backend.py::TestToVirtualPath::": "FilesystemBackend's mapping of local paths to virtual ones",
    "test_filesystem_backend.py::TestDisplayPath::": "FilesystemBackend's mapping of local paths to virtual ones",
    "test_filesystem_backend.py::TestGrepPythonFallbackTimeout::test_python_search_times_out_with_zero_timeout": _FS_ENGINE,
    "test_filesystem_backend.py::TestGrepPythonFallbackTimeout::test_python_search_streams_large_file_with_per_line_timeout": _FS_ENGINE,
    "test_filesystem_backend.py::TestGrepPythonFallbackTimeout::test_python_search_reports_file_error_after_partial_scan": _FS_ENGINE,
    "test_filesystem_backend.py::TestGrepPythonFallbackTimeout::test_python_search_surfaces_open_failure_without_scanned_lines": _FS_ENGINE,
    "test_filesystem_backend.py::TestGrepPythonFallbackTimeout::test_python_search_returns_matches_when_another_file_errors": _FS_ENGINE,
    "test_filesystem_backend.py::TestGrepPythonFallbackTimeout::test_python_search_skips_file_over_size_limit": "sets FilesystemBackend's per-file grep size limit to 3 bytes; skillsvc's (--vfs.max-grep-file-bytes) is a server flag, held by internal/vfs",
    "test_filesystem_backend.py::TestGrepPythonFallbackTimeout::test_python_search_non_virtual_mode_keys_on_absolute_path": "FilesystemBackend's non-virtual path mode",
    "test_filesystem_backend.py::TestGrepPythonFallbackTimeout::test_python_search_handles_cr_only_line_endings": "contradicts test_ripgrep_context_treats_bare_carriage_returns_as_text: a lone CR ends a line for the Python fallback, not for ripgrep (FilesystemBackend's engine when installed) or skillsvc, whose lines end at LF",
    "test_filesystem_backend.py::TestGrepPythonFallbackTimeout::test_grep_flags_timeout_as_truncated_with_partial_results": _FS_ENGINE,
    "test_filesystem_backend.py::TestFilesystemGrepContext::": _CONTEXT,
    "test_filesystem_backend.py::test_ls_symlink_loop_path_returns_structured_error": _SYMLINKS,
    "test_filesystem_backend.py::test_ls_virtual_mode_reports_child_symlink_loop": _SYMLINKS,
    "test_filesystem_backend.py::test_file_operations_return_errors_for_symlink_loop_paths": _SYMLINKS,
    "test_filesystem_backend.py::TestVirtualModeDefault::": "FilesystemBackend's virtual_mode constructor flag",
    "test_filesystem_backend.py::TestFilesystemDelete::test_delete_empty_directory": "an empty directory: in an object store a directory exists while a file is below it",
    "test_filesystem_backend.py::TestFilesystemDelete::test_delete_symlink_to_dir_does_not_follow": _SYMLINKS,
    "test_filesystem_backend.py::TestFilesystemDelete::test_delete_resolve_failure_returns_error": "FilesystemBackend's path resolution failing, patched",
    "test_filesystem_backend.py::TestFilesystemDelete::test_delete_unlink_failure_returns_error": "a local unlink failing, patched",
    "test_filesystem_backend_async.py::test_filesystem_agrep_with_context": _CONTEXT,
    "test_filesystem_backend_async.py::test_filesystem_agrep_with_context_times_out": _CONTEXT,
    "test_glob_semantics.py::TestGlobSearchFilesMatrix::test_matrix": "the in-memory helper behind StateBackend and StoreBackend; the same matrix is restated for the backends (test_glob_matrix)",
    "test_glob_semantics.py::test_build_glob_cmd_passes_user_pattern_unchanged": _SANDBOX,
    "test_glob_semantics.py::TestSandboxGlobScriptMatrix::test_matrix": _SANDBOX + "; the same matrix is restated for the backends (test_glob_matrix)",
    "test_glob_semantics.py::test_glob_command_template_uses_walk_not_stdlib_glob": _SANDBOX,
    "test_glob_semantics.py::test_glob_directory_only_walk_honors_time_budget": _SANDBOX,
    "test_glob_semantics.py::test_glob_script_body_is_shell_safe": _SANDBOX,
    "test_glob_semantics.py::test_glob_script_skips_symlinks_outside_root": _SANDBOX,
    "test_glob_semantics.py::test_glob_script_reports_unreadable_subtree_instead_of_shrinking": _SANDBOX,
    "test_glob_semantics.py::TestSandboxGlobBraceExpansionLimit::test_over_limit_returns_pattern_too_broad": _SANDBOX + " (an over-broad pattern is refused here with deepagents' own message: test_glob_refuses_what_deepagents_refuses)",
    "test_glob_semantics.py::TestSandboxGlobBraceExpansionLimit::test_traversal_uses_a_distinct_code": _SANDBOX + " (a '..' pattern is refused here with deepagents' own message: test_glob_refuses_what_deepagents_refuses)",
    "test_file_format.py::test_text_round_trip": _HELPER,
    "test_file_format.py::test_legacy_list_content_is_readable": _LEGACY,
    "test_file_format.py::test_empty_legacy_list_content_is_readable": _LEGACY,
    "test_file_format.py::test_legacy_list_content_rejects_non_string_items": _LEGACY,
    "test_file_format.py::test_binary_round_trip": _HELPER,
    "test_file_format.py::test_compile_glob_is_cached": _HELPER,
    "test_composite_backend.py::test_composite_grep_multiple_routes_aggregation": "marked xfail upstream: its two StoreBackend routes over one store share their files",
    "test_composite_backend_async.py::test_composite_agrep_multiple_routes_aggregation_async": "marked xfail upstream: its two StoreBackend routes over one store share their files",
}
# The composite cases without a FilesystemBackend default.
for _case in """
test_composite_state_backend_routes_and_search test_composite_backend_store_to_store test_composite_backend_multiple_routes
test_composite_backend_grep_path_isolation test_composite_backend_glob_path_isolation test_composite_grep_and_glob_propagate_truncated
test_composite_grep_merge_ors_truncated_across_backends test_composite_glob_merge_ors_truncated_across_backends
test_composite_glob_merge_propagates_backend_error test_composite_glob_default_error_short_circuits_routes
test_composite_async_merge_propagates_truncated_and_error test_composite_ls_root_propagates_default_error
test_composite_als_root_propagates_default_error test_composite_backend_ls_multiple_routes_nested
test_composite_backend_intercept_large_tool_result test_composite_backend_intercept_large_tool_result_routed_to_store
test_composite_backend_execute_with_sandbox_default test_composite_backend_execute_without_sandbox_default
test_composite_backend_supports_execution_check test_composite_backend_execute_with_routed_backends
test_composite_grep_error_in_routed_backend test_composite_grep_error_in_routed_backend_at_root
test_composite_grep_error_in_default_backend_at_root test_composite_glob_targeting_specific_route
test_composite_glob_leading_slash_pattern test_composite_root_glob_preserves_route_pattern_anchoring
test_composite_glob_nested_path_in_route test_grep_path_stripping_matches_get_backend_and_key
test_grep_max_count_enforced_across_routes test_grep_max_count_short_circuits_routes test_grep_no_cap_returns_all_across_routes
test_grep_supports_legacy_backends_across_routes test_glob_path_stripping_matches_get_backend_and_key
test_get_backend_and_key_consistency test_route_for_path_edge_cases test_route_for_path_no_trailing_slash_boundary
test_write_result_path_restored_to_full_routed_path test_edit_result_path_restored_to_full_routed_path
test_composite_delete_routes_to_correct_backend test_composite_delete_directory_recurses_within_route
test_composite_delete_missing_returns_error test_composite_adelete_routes_to_correct_backend
test_composite_adelete_missing_returns_error test_composite_delete_unsupported_route_returns_error
test_composite_adelete_unsupported_route_returns_error
""".split():
    NOT_APPLICABLE[f"test_composite_backend.py::{_case}"] = _COMPOSITE
for _case in """
test_composite_state_backend_routes_and_search_async test_composite_backend_store_to_store_async
test_composite_backend_multiple_routes_async test_composite_backend_aglob_path_isolation
test_composite_backend_als_multiple_routes_nested_async test_composite_backend_aexecute_with_sandbox_default_async
test_composite_backend_aexecute_forwards_timeout_async test_composite_backend_aexecute_without_sandbox_default_async
test_composite_backend_aexecute_with_routed_backends_async test_composite_agrep_error_in_routed_backend_async
test_composite_agrep_error_in_routed_backend_at_root_async test_composite_agrep_error_in_default_backend_at_root_async
test_composite_agrep_supports_legacy_child_signatures test_composite_aglob_default_error_short_circuits_routes_async
test_composite_aglob_targeting_specific_route_async test_composite_root_aglob_preserves_route_pattern_anchoring_async
test_composite_aglob_nested_path_in_route_async test_awrite_result_path_restored_to_full_routed_path
test_aedit_result_path_restored_to_full_routed_path
""".split():
    NOT_APPLICABLE[f"test_composite_backend_async.py::{_case}"] = _COMPOSITE


class Ops:
    """A backend's methods, sync or async, awaited either way: `await
    be.read(...)` calls read or aread."""

    def __init__(self, backend: BackendProtocol, aio: bool) -> None:
        self.backend = backend
        self.aio = aio

    def __getattr__(self, name: str) -> Callable[..., Any]:
        if self.aio:
            return getattr(self.backend, "a" + name)
        method = getattr(self.backend, name)

        async def call(*args: Any, **kwargs: Any) -> Any:
            return method(*args, **kwargs)

        return call

    def on(self, backend: BackendProtocol) -> Ops:
        """The same mode on another backend (a composite over this one)."""
        return Ops(backend, self.aio)


def _backend(env: Any) -> SkillsvcBackend:
    """A backend for a user of its own: no skill library (a search from "/"
    finds only the test's files), and its own per-user request limits, which
    keep their production defaults."""
    return SkillsvcBackend(env.grpc_addr, user="dc-" + uuid.uuid4().hex[:12], thread="t1")


@pytest.fixture(params=["sync", "async"])
async def be(request: pytest.FixtureRequest, skillsvc_env: Any) -> Any:
    backend = _backend(skillsvc_env)
    yield Ops(backend, request.param == "async")
    await backend.aclose()


async def seed(be: Ops, files: dict[str, str | bytes]) -> None:
    """Makes files: text with write, bytes with upload_files."""
    for path, content in files.items():
        if isinstance(content, bytes):
            [res] = await be.upload_files([(path, content)])
        else:
            res = await be.write(path, content)
        assert res.error is None, (path, res.error)


def paths(infos: list[Any] | None) -> list[str]:
    return [i["path"] for i in infos or []]


def text(r: ReadResult) -> str:
    assert r.error is None and r.file_data is not None, r.error
    return r.file_data["content"]


def store_route() -> StoreBackend:
    return StoreBackend(store=InMemoryStore(), namespace=lambda _rt: ("filesystem",))


# test_protocol.py


def test_every_protocol_method_is_overridden() -> None:
    """Not upstream's: what its NotImplementedError cases come to for a
    backend that implements the protocol."""
    for name in ["ls", "read", "write", "edit", "delete", "glob", "grep", "upload_files", "download_files"]:
        for method in (name, "a" + name):
            assert getattr(SkillsvcBackend, method) is not getattr(BackendProtocol, method), method


@upstream("test_protocol.py::TestSupportsDelete::test_true_when_overridden")
def test_supports_delete(skillsvc_env: Any) -> None:
    b = _backend(skillsvc_env)
    assert _supports_delete(b) is True
    b.close()


@upstream("test_protocol.py::TestMethodAcceptsMaxCount::test_explicit_keyword_param_detected")
def test_grep_accepts_max_count() -> None:
    assert _method_accepts_max_count(SkillsvcBackend, "grep") is True
    assert _method_accepts_max_count(SkillsvcBackend, "agrep") is True


# test_store_backend.py, test_store_backend_async.py, test_state_backend.py


@upstream("test_store_backend.py::test_store_backend_crud_and_search", "test_store_backend_async.py::test_store_backend_async_crud_and_search")
async def test_crud_and_search(be: Ops) -> None:
    res = await be.write(f"{W}/docs/readme.md", "hello store")
    assert isinstance(res, WriteResult) and res.error is None and res.path == f"{W}/docs/readme.md"
    r = await be.read(f"{W}/docs/readme.md")
    assert isinstance(r, ReadResult) and "hello store" in text(r)
    e = await be.edit(f"{W}/docs/readme.md", "hello", "hi", replace_all=False)
    assert isinstance(e, EditResult) and e.error is None and e.occurrences == 1
    assert f"{W}/docs/readme.md" in paths((await be.ls(f"{W}/docs/")).entries)
    matches = (await be.grep("hi", path=f"{W}/")).matches
    assert matches is not None and any(m["path"] == f"{W}/docs/readme.md" for m in matches)
    # A bare "*.md" and "**/*.md" both match the nested file.
    bare = paths((await be.glob("*.md", path=f"{W}/")).matches)
    walked = paths((await be.glob("**/*.md", path=f"{W}/")).matches)
    assert f"{W}/docs/readme.md" in bare and f"{W}/docs/readme.md" in walked
    assert set(bare) == set(walked)


@upstream(
    "test_store_backend.py::test_store_backend_read_surfaces_pagination_metadata",
    "test_store_backend_async.py::test_store_backend_aread_surfaces_pagination_metadata",
)
async def test_read_surfaces_pagination_metadata(be: Ops) -> None:
    await seed(be, {f"{W}/notes.txt": "one\ntwo\nthree\nfour\nfive"})
    r = await be.read(f"{W}/notes.txt", offset=1, limit=2)
    assert r.error is None
    assert (r.total_lines, r.start_line, r.end_line, r.next_offset) == (5, 2, 3, 3)


@upstream(
    "test_store_backend.py::test_store_backend_read_non_positive_limit_returns_empty_read",
    "test_store_backend_async.py::test_store_backend_aread_non_positive_limit_returns_empty_read",
    "test_state_backend.py::test_state_backend_read_non_positive_limit_returns_empty_read",
)
@pytest.mark.parametrize(("offset", "limit"), [(0, 0), (0, -3), (-1, 0)])
async def test_read_non_positive_limit_returns_empty_read(be: Ops, offset: int, limit: int) -> None:
    await seed(be, {f"{W}/notes.txt": "one\ntwo\nthree"})
    r = await be.read(f"{W}/notes.txt", offset=offset, limit=limit)
    assert r.error is None and r.file_data is not None
    assert r.file_data["content"] == ""
    assert r.start_line is None


@upstream(
    "test_store_backend.py::test_store_backend_read_negative_offset_starts_at_first_line",
    "test_store_backend_async.py::test_store_backend_aread_negative_offset_starts_at_first_line",
    "test_state_backend.py::test_state_backend_read_negative_offset_starts_at_first_line",
)
async def test_read_negative_offset_starts_at_first_line(be: Ops) -> None:
    await seed(be, {f"{W}/notes.txt": "one\ntwo\nthree"})
    r = await be.read(f"{W}/notes.txt", offset=-1, limit=2)
    assert r.error is None
    assert (r.start_line, r.end_line) == (1, 2)


@upstream("test_store_backend.py::test_store_backend_write_overwrites_existing_file")
async def test_write_overwrites_existing_file(be: Ops) -> None:
    assert (await be.write(f"{W}/charmander.txt", "Hello world")).error is None
    assert (await be.write(f"{W}/charmander.txt", "New content")).error is None
    assert "New content" in text(await be.read(f"{W}/charmander.txt"))


NESTED = {
    f"{W}/src/main.py": "main code",
    f"{W}/src/utils/helper.py": "helper code",
    f"{W}/src/utils/common.py": "common code",
    f"{W}/docs/readme.md": "readme",
    f"{W}/docs/api/reference.md": "api reference",
    f"{W}/config.json": "config",
}


@upstream(
    "test_store_backend.py::test_store_backend_ls_nested_directories",
    "test_store_backend_async.py::test_store_backend_als_nested_directories",
    partial="its last assertion, that ls of a missing directory is an empty list, contradicts FilesystemBackend's "
    "path_not_found error (test_ls_nonexistent_path_sets_error), which is held",
)
@upstream(
    "test_filesystem_backend.py::test_filesystem_backend_ls_nested_directories",
    "test_filesystem_backend.py::test_filesystem_backend_ls_normal_mode_nested",
    "test_filesystem_backend_async.py::test_filesystem_backend_als_nested_directories",
    "test_filesystem_backend_async.py::test_filesystem_backend_als_normal_mode_nested",
)
async def test_ls_nested_directories(be: Ops) -> None:
    await seed(be, NESTED)
    root = paths((await be.ls(f"{W}/")).entries)
    assert f"{W}/config.json" in root and f"{W}/src/" in root and f"{W}/docs/" in root
    assert not {f"{W}/src/main.py", f"{W}/src/utils/helper.py", f"{W}/docs/readme.md", f"{W}/docs/api/reference.md"} & set(root)
    src = paths((await be.ls(f"{W}/src/")).entries)
    assert f"{W}/src/main.py" in src and f"{W}/src/utils/" in src and f"{W}/src/utils/helper.py" not in src
    utils = paths((await be.ls(f"{W}/src/utils/")).entries)
    assert sorted(utils) == [f"{W}/src/utils/common.py", f"{W}/src/utils/helper.py"]
    missing = await be.ls(f"{W}/nonexistent/")
    assert missing.entries is None
    assert missing.error == f"Path '{W}/nonexistent/': path_not_found"


@upstream(
    "test_store_backend.py::test_store_backend_ls_trailing_slash",
    "test_store_backend_async.py::test_store_backend_als_trailing_slash",
    "test_filesystem_backend.py::test_filesystem_backend_ls_trailing_slash",
    "test_filesystem_backend_async.py::test_filesystem_backend_als_trailing_slash",
)
async def test_ls_trailing_slash(be: Ops) -> None:
    await seed(be, {f"{W}/file.txt": "content", f"{W}/dir/nested.txt": "nested"})
    listing = paths((await be.ls(f"{W}/")).entries)
    assert listing and listing == sorted(listing)
    assert paths((await be.ls(f"{W}/dir/")).entries) == paths((await be.ls(f"{W}/dir")).entries) == [f"{W}/dir/nested.txt"]
    missing = await be.ls(f"{W}/nonexistent/")
    assert missing.entries is None and missing.error == f"Path '{W}/nonexistent/': path_not_found"


@upstream(
    "test_store_backend.py::test_store_backend_intercept_large_tool_result",
    "test_store_backend_async.py::test_store_backend_intercept_large_tool_result_async",
    "test_filesystem_backend.py::test_filesystem_backend_intercept_large_tool_result",
    "test_filesystem_backend_async.py::test_filesystem_backend_intercept_large_tool_result_async",
)
async def test_intercept_large_tool_result(be: Ops) -> None:
    """The middleware writes at the root, /large_tool_results/, which the
    backend keeps in the thread's workspace and serves by that name."""
    mw = FilesystemMiddleware(backend=be.backend, tool_token_limit_before_evict=1000)
    result = mw._intercept_large_tool_result(ToolMessage(content="y" * 5000, tool_call_id="test_456"))
    assert isinstance(result, ToolMessage)
    assert "Tool result too large" in result.content
    assert "/large_tool_results/test_456" in result.content
    assert text(await be.read("/large_tool_results/test_456")) == "y" * 5000
    assert text(await be.read(f"{W}/large_tool_results/test_456")) == "y" * 5000


@upstream("test_store_backend_async.py::test_store_backend_aintercept_large_tool_result_async")
async def test_aintercept_large_tool_result(be: Ops) -> None:
    mw = FilesystemMiddleware(backend=be.backend, tool_token_limit_before_evict=1000)
    artifact = {"kind": "structured", "value": {"key": "v"}}
    msg = ToolMessage(
        content="z" * 5000,
        tool_call_id="test_async_789",
        name="example_tool",
        id="tool_msg_async_1",
        artifact=artifact,
        status="error",
        additional_kwargs={"trace": "abc"},
        response_metadata={"provider": "mock"},
    )
    result = await mw._aintercept_large_tool_result(msg)
    assert isinstance(result, ToolMessage)
    assert "Tool result too large" in result.content and "/large_tool_results/test_async_789" in result.content
    assert (result.name, result.id, result.artifact, result.status) == ("example_tool", "tool_msg_async_1", artifact, "error")
    assert result.additional_kwargs == {"trace": "abc"} and result.response_metadata == {"provider": "mock"}
    assert text(await be.read("/large_tool_results/test_async_789")) == "z" * 5000


@upstream("test_store_backend.py::test_store_backend_namespace_isolation")
async def test_store_backend_namespace_isolation(skillsvc_env: Any) -> None:
    """Two users writing the same path each read their own (a namespace per
    user upstream, the caller's identity here)."""
    alice, bob = _backend(skillsvc_env), _backend(skillsvc_env)
    assert alice.write(f"{W}/notes.txt", "alice notes").error is None
    assert bob.write(f"{W}/notes.txt", "bob notes").error is None
    assert "alice notes" in text(alice.read(f"{W}/notes.txt"))
    assert "bob notes" in text(bob.read(f"{W}/notes.txt"))
    alice.close()
    bob.close()


SPECIAL = {
    f"{W}/code.py": "def __init__(self, arg):\n    pass",
    f"{W}/types.py": "def func(x: str | int) -> None:\n    return x",
    f"{W}/regex.py": "pattern = r'[a-z]+'\nchars = '(.*)'",
    f"{W}/config.json": '{"api.key": "value", "url": "https://example.com"}',
    f"{W}/math.py": "result = x * y + z\nformula = a^2 + b^2",
}


@upstream("test_store_backend.py::test_store_backend_grep_literal_search_special_chars")
@pytest.mark.parametrize(
    ("pattern", "expected_file"),
    [
        ("def __init__(", "code.py"),
        ("str | int", "types.py"),
        ("[a-z]", "regex.py"),
        ("(.*)", "regex.py"),
        ("api.key", "config.json"),
        ("x * y", "math.py"),
        ("a^2", "math.py"),
    ],
)
async def test_store_grep_literal_search_special_chars(be: Ops, pattern: str, expected_file: str) -> None:
    await seed(be, SPECIAL)
    matches = (await be.grep(pattern, path=f"{W}/")).matches
    assert matches is not None and any(expected_file in m["path"] for m in matches)


@upstream("test_store_backend.py::test_store_backend_delete", "test_store_backend.py::test_store_backend_adelete")
async def test_delete(be: Ops) -> None:
    await seed(be, {f"{W}/docs/readme.md": "hello store", f"{W}/a.md": "x"})
    assert (await be.read(f"{W}/docs/readme.md")).error is None
    res = await be.delete(f"{W}/docs/readme.md")
    assert isinstance(res, DeleteResult) and res.error is None and res.path == f"{W}/docs/readme.md"
    assert (await be.read(f"{W}/docs/readme.md")).error is not None
    assert (await be.delete(f"{W}/a.md")).path == f"{W}/a.md"
    missing = await be.delete(f"{W}/a.md")
    assert missing.error is not None and "not found" in missing.error


@upstream("test_store_backend.py::test_store_backend_delete_directory_recursive", "test_store_backend.py::test_store_backend_adelete_directory_recursive")
async def test_delete_directory_recursive(be: Ops) -> None:
    await seed(be, {f"{W}/work/a.txt": "a", f"{W}/work/sub/b.txt": "b", f"{W}/keep.txt": "k"})
    res = await be.delete(f"{W}/work")
    assert res.error is None and res.path == f"{W}/work"
    assert (await be.read(f"{W}/work/a.txt")).error is not None
    assert (await be.read(f"{W}/work/sub/b.txt")).error is not None
    assert (await be.read(f"{W}/keep.txt")).error is None


@upstream("test_store_backend.py::test_store_backend_delete_missing_returns_error")
async def test_delete_missing_returns_error(be: Ops) -> None:
    res = await be.delete(f"{W}/nope.md")
    assert res.path is None and res.error is not None and "not found" in res.error


@upstream(
    "test_store_backend.py::test_store_backend_delete_treats_wildcard_as_literal_key",
    "test_store_backend.py::test_store_backend_adelete_treats_wildcard_as_literal_key",
)
async def test_delete_treats_wildcard_as_literal(be: Ops) -> None:
    await seed(be, {f"{W}/a.md": "a", f"{W}/b.md": "b", f"{W}/*": "literal star"})
    res = await be.delete(f"{W}/*")
    assert res.error is None and res.path == f"{W}/*"
    assert (await be.read(f"{W}/a.md")).error is None and (await be.read(f"{W}/b.md")).error is None
    assert (await be.read(f"{W}/*")).error is not None
    missing = await be.delete(f"{W}/*")
    assert missing.error is not None and "not found" in missing.error


@upstream("test_store_backend.py::test_store_backend_delete_wildcard_missing_does_not_match_files")
async def test_delete_wildcard_missing_does_not_match_files(be: Ops) -> None:
    await seed(be, {f"{W}/a.md": "a", f"{W}/b.md": "b"})
    res = await be.delete(f"{W}/*")
    assert res.path is None and res.error is not None and "not found" in res.error
    assert (await be.read(f"{W}/a.md")).error is None and (await be.read(f"{W}/b.md")).error is None


@upstream("test_store_backend_async.py::test_store_backend_async_errors")
async def test_errors(be: Ops) -> None:
    err = await be.edit(f"{W}/missing.txt", "a", "b")
    assert isinstance(err, EditResult) and err.error and "not found" in err.error
    r = await be.read(f"{W}/nonexistent.txt")
    assert isinstance(r, ReadResult) and r.error is not None


@upstream("test_store_backend_async.py::test_store_backend_aedit_replace_all", "test_filesystem_backend_async.py::test_filesystem_aedit_replace_all")
async def test_edit_replace_all(be: Ops) -> None:
    await seed(be, {f"{W}/test.txt": "foo bar foo baz"})
    res = await be.edit(f"{W}/test.txt", "foo", "qux", replace_all=False)
    assert res.error is not None and "appears 2 times" in res.error
    res = await be.edit(f"{W}/test.txt", "foo", "qux", replace_all=True)
    assert res.error is None and res.occurrences == 2
    assert "qux bar qux baz" in text(await be.read(f"{W}/test.txt"))
    res = await be.edit(f"{W}/test.txt", "bar", "xyz", replace_all=False)
    assert res.error is None and res.occurrences == 1
    assert "qux xyz qux baz" in text(await be.read(f"{W}/test.txt"))


@upstream("test_store_backend_async.py::test_store_backend_aread_with_offset_and_limit", "test_filesystem_backend_async.py::test_filesystem_aread_with_offset_and_limit")
async def test_read_with_offset_and_limit(be: Ops) -> None:
    await seed(be, {f"{W}/multi.txt": "\n".join(f"Line {i}" for i in range(1, 11))})
    content = text(await be.read(f"{W}/multi.txt", offset=2, limit=3))
    assert all(f"Line {i}" in content for i in (3, 4, 5))
    assert "Line 1" not in content and "Line 6" not in content


@upstream("test_store_backend_async.py::test_store_backend_agrep_with_glob", "test_filesystem_backend_async.py::test_filesystem_agrep_with_glob")
async def test_grep_with_glob(be: Ops) -> None:
    await seed(be, {f"{W}/test.py": "import os", f"{W}/test.txt": "import nothing", f"{W}/main.py": "import sys"})
    found = paths((await be.grep("import", path=f"{W}/", glob="*.py")).matches)
    assert sorted(found) == [f"{W}/main.py", f"{W}/test.py"]


@upstream("test_store_backend_async.py::test_store_backend_aglob_patterns", "test_filesystem_backend_async.py::test_filesystem_aglob_recursive")
async def test_glob_patterns(be: Ops) -> None:
    await seed(
        be,
        {
            f"{W}/src/main.py": "code",
            f"{W}/src/utils/helper.py": "utils",
            f"{W}/tests/test_main.py": "tests",
            f"{W}/readme.md": "docs",
            f"{W}/docs/api.md": "api docs",
            f"{W}/readme.txt": "docs",
        },
    )
    py = paths((await be.glob("**/*.py", path=f"{W}/")).matches)
    assert {f"{W}/src/main.py", f"{W}/src/utils/helper.py", f"{W}/tests/test_main.py"} <= set(py)
    assert not any("readme" in p for p in py)
    md = paths((await be.glob("**/*.md", path=f"{W}/")).matches)
    assert {f"{W}/readme.md", f"{W}/docs/api.md"} <= set(md)


@upstream("test_store_backend_async.py::test_store_backend_aupload_adownload")
async def test_upload_download(be: Ops) -> None:
    up = await be.upload_files([(f"{W}/file1.bin", b"Binary content 1"), (f"{W}/file2.bin", b"Binary content 2")])
    assert len(up) == 2 and all(r.error is None for r in up)
    down = await be.download_files([f"{W}/file1.bin", f"{W}/file2.bin"])
    assert len(down) == 2 and all(r.error is None for r in down)


@upstream(
    "test_store_backend_async.py::test_store_backend_agrep_invalid_regex",
    "test_composite_backend.py::test_composite_grep_invalid_regex",
    "test_composite_backend_async.py::test_composite_agrep_invalid_regex_async",
)
async def test_grep_invalid_regex(be: Ops) -> None:
    """Special characters are searched literally: no error, a list."""
    await seed(be, {f"{W}/test.txt": "some content"})
    assert (await be.grep("[invalid", path=f"{W}/")).matches is not None
    comp = be.on(CompositeBackend(default=be.backend, routes={}))
    assert (await comp.grep("[invalid(", path="/")).matches is not None


# test_filesystem_backend.py, test_filesystem_backend_async.py


@upstream(
    "test_filesystem_backend.py::test_filesystem_backend_normal_mode",
    "test_filesystem_backend_async.py::test_filesystem_backend_async_normal_mode",
)
async def test_normal_mode(be: Ops) -> None:
    await seed(be, {f"{W}/a.txt": "hello fs", f"{W}/dir/b.py": "print('x')\nhello"})
    listed = paths((await be.ls(W)).entries)
    assert f"{W}/a.txt" in listed and f"{W}/dir/b.py" not in listed and f"{W}/dir/" in listed
    assert "hello fs" in text(await be.read(f"{W}/a.txt"))
    e = await be.edit(f"{W}/a.txt", "fs", "filesystem", replace_all=False)
    assert isinstance(e, EditResult) and e.error is None and e.occurrences == 1
    w = await be.write(f"{W}/new.txt", "new content")
    assert isinstance(w, WriteResult) and w.error is None and w.path.endswith("new.txt")
    matches = (await be.grep("hello", path=W)).matches
    assert matches is not None and any(m["path"].endswith("a.txt") for m in matches)
    assert f"{W}/dir/b.py" in paths((await be.glob("*.py", path=W)).matches)


@upstream("test_filesystem_backend.py::test_filesystem_backend_glob_default_matches_backend_root")
async def test_glob_default_matches_backend_root(be: Ops) -> None:
    """No path means the root; nothing outside it is found (skillsvc has
    nothing outside its mounts to find)."""
    await seed(be, {f"{W}/dir/inside.py": "print('inside')"})
    omitted = paths((await be.glob("**/*.py")).matches)
    assert omitted == paths((await be.glob("**/*.py", path="/")).matches)
    assert f"{W}/dir/inside.py" in omitted


@upstream("test_filesystem_backend.py::test_filesystem_backend_glob_hidden_paths_require_explicit_dot_patterns")
async def test_glob_hidden_paths_require_explicit_dot_patterns(be: Ops) -> None:
    await seed(
        be,
        {f"{W}/.env": "TOKEN=value", f"{W}/.hidden.py": "print('hidden')", f"{W}/visible.py": "print('visible')", f"{W}/.github/workflows/ci.yml": "name: ci"},
    )

    async def glob(pattern: str) -> list[str]:
        return paths((await be.glob(pattern, path=W)).matches)

    assert f"{W}/.env" not in await glob("*")
    bare_py = await glob("*.py")
    assert f"{W}/.hidden.py" not in bare_py and f"{W}/visible.py" in bare_py
    assert f"{W}/.github/workflows/ci.yml" not in await glob("**/*.yml")
    assert f"{W}/.env" in await glob(".*")
    assert f"{W}/.hidden.py" in await glob(".*.py")
    assert f"{W}/.github/workflows/ci.yml" in await glob(".github/**/*.yml")


@upstream(
    "test_filesystem_backend.py::test_filesystem_backend_virtual_mode",
    "test_filesystem_backend_async.py::test_filesystem_backend_async_virtual_mode",
    partial="a path that leaves the root is refused with an error result where FilesystemBackend raises ValueError; "
    "StoreBackend answers such a path with an error result too",
)
async def test_virtual_mode(be: Ops) -> None:
    await seed(be, {f"{W}/a.txt": "hello virtual", f"{W}/dir/b.md": "content"})
    listed = paths((await be.ls(f"{W}/")).entries)
    assert f"{W}/a.txt" in listed and f"{W}/dir/b.md" not in listed and f"{W}/dir/" in listed
    assert "hello virtual" in text(await be.read(f"{W}/a.txt"))
    e = await be.edit(f"{W}/a.txt", "virtual", "virt", replace_all=False)
    assert e.error is None and e.occurrences == 1
    assert (await be.write(f"{W}/new.txt", "x")).error is None
    assert (await be.read(f"{W}/new.txt")).error is None
    matches = (await be.grep("virt", path=f"{W}/")).matches
    assert matches is not None and any(m["path"] == f"{W}/a.txt" for m in matches)
    assert f"{W}/dir/b.md" in paths((await be.glob("**/*.md", path=f"{W}/")).matches)
    assert (await be.grep("[", path=f"{W}/")).matches is not None
    assert (await be.read(f"{W}/../a.txt")).error is not None


@upstream("test_filesystem_backend.py::test_filesystem_backend_read_non_utf8_file")
async def test_read_non_utf8_file(be: Ops) -> None:
    await seed(be, {f"{W}/chinese.txt": "中文内容".encode("gbk")})
    r = await be.read(f"{W}/chinese.txt")
    assert isinstance(r, ReadResult) and r.error is not None and "chinese.txt" in r.error


@upstream("test_filesystem_backend.py::test_filesystem_backend_read_populates_pagination_metadata")
async def test_read_populates_pagination_metadata(be: Ops) -> None:
    await seed(be, {f"{W}/notes.txt": "one\ntwo\nthree\nfour\nfive"})
    partial = await be.read(f"{W}/notes.txt", offset=1, limit=2)
    assert partial.error is None and (partial.total_lines, partial.start_line, partial.end_line, partial.next_offset) == (5, 2, 3, 3)
    final = await be.read(f"{W}/notes.txt", offset=3, limit=10)
    assert final.error is None and (final.total_lines, final.start_line, final.end_line, final.next_offset) == (5, 4, 5, None)


@upstream("test_filesystem_backend.py::test_filesystem_backend_read_offset_beyond_eof_errors_with_total")
async def test_read_offset_beyond_eof_errors_with_total(be: Ops) -> None:
    await seed(be, {f"{W}/notes.txt": "one\ntwo\nthree\nfour\nfive"})
    r = await be.read(f"{W}/notes.txt", offset=99, limit=10)
    assert r.error == "Line offset 99 exceeds file length (5 lines)"
    assert r.file_data is None and r.total_lines is None and r.next_offset is None


@upstream("test_filesystem_backend.py::test_filesystem_backend_read_empty_file_leaves_pagination_unset")
async def test_read_empty_file_leaves_pagination_unset(be: Ops) -> None:
    await seed(be, {f"{W}/empty.txt": ""})
    r = await be.read(f"{W}/empty.txt", offset=0, limit=10)
    assert "empty contents" in text(r)
    assert text(r) == EMPTY_CONTENT_WARNING
    assert (r.total_lines, r.start_line, r.end_line, r.next_offset) == (None, None, None, None)


@upstream("test_filesystem_backend.py::test_filesystem_backend_read_non_positive_limit_returns_empty_read")
@pytest.mark.parametrize("limit", [0, -3])
async def test_read_non_positive_limit_leaves_pagination_unset(be: Ops, limit: int) -> None:
    await seed(be, {f"{W}/notes.txt": "one\ntwo\nthree\n"})
    r = await be.read(f"{W}/notes.txt", offset=0, limit=limit)
    assert text(r) == ""
    assert (r.total_lines, r.start_line, r.end_line, r.next_offset) == (None, None, None, None)


@upstream("test_filesystem_backend.py::test_filesystem_backend_read_negative_offset_starts_at_first_line")
async def test_read_negative_offset_keeps_line_breaks(be: Ops) -> None:
    await seed(be, {f"{W}/notes.txt": "one\ntwo\nthree\n"})
    r = await be.read(f"{W}/notes.txt", offset=-1, limit=2)
    assert text(r) == "one\ntwo\n"
    assert (r.start_line, r.end_line, r.next_offset) == (1, 2, 2)


@upstream("test_filesystem_backend.py::test_filesystem_backend_read_zero_limit_on_empty_file_reports_empty_file")
async def test_read_zero_limit_on_empty_file_reports_empty_file(be: Ops) -> None:
    await seed(be, {f"{W}/blank.txt": ""})
    assert "empty contents" in text(await be.read(f"{W}/blank.txt", offset=0, limit=0))


@upstream("test_filesystem_backend.py::test_filesystem_backend_read_zero_limit_on_binary_returns_full_payload")
async def test_read_zero_limit_on_binary_returns_full_payload(be: Ops) -> None:
    await seed(be, {f"{W}/clip.png": b"\x89PNG\r\n\x1a\n" + b"\x00" * 32})
    r = await be.read(f"{W}/clip.png", offset=0, limit=0)
    assert r.error is None and r.file_data is not None
    assert r.file_data["encoding"] == "base64" and r.file_data["content"] != ""


@upstream("test_filesystem_backend.py::test_filesystem_backend_reads_mkv_as_binary")
async def test_reads_mkv_as_binary(be: Ops) -> None:
    raw = b"\x80\x81mkv bytes"
    await seed(be, {f"{W}/clip.mkv": raw})
    r = await be.read(f"{W}/clip.mkv")
    assert isinstance(r, ReadResult) and r.error is None
    assert r.file_data == {"content": base64.standard_b64encode(raw).decode("ascii"), "encoding": "base64"}


@upstream(
    "test_filesystem_backend.py::test_filesystem_upload_single_file",
    "test_filesystem_backend_async.py::test_filesystem_aupload_single_file",
)
async def test_upload_single_file(be: Ops) -> None:
    res = await be.upload_files([(f"{W}/test_upload.bin", b"Hello, Binary World!")])
    assert [(r.path, r.error) for r in res] == [(f"{W}/test_upload.bin", None)]
    assert (await be.download_files([f"{W}/test_upload.bin"]))[0].content == b"Hello, Binary World!"


@upstream(
    "test_filesystem_backend.py::test_filesystem_upload_multiple_files",
    "test_filesystem_backend_async.py::test_filesystem_aupload_multiple_files",
)
async def test_upload_multiple_files(be: Ops) -> None:
    files = [(f"{W}/file1.bin", b"Content 1"), (f"{W}/file2.bin", b"Content 2"), (f"{W}/subdir/file3.bin", b"Content 3")]
    res = await be.upload_files(files)
    assert [(r.path, r.error) for r in res] == [(p, None) for p, _ in files]
    assert [d.content for d in await be.download_files([p for p, _ in files])] == [c for _, c in files]


@upstream(
    "test_filesystem_backend.py::test_filesystem_download_single_file",
    "test_filesystem_backend_async.py::test_filesystem_adownload_single_file",
)
async def test_download_single_file(be: Ops) -> None:
    await seed(be, {f"{W}/test_download.bin": b"Download me!"})
    [d] = await be.download_files([f"{W}/test_download.bin"])
    assert (d.path, d.content, d.error) == (f"{W}/test_download.bin", b"Download me!", None)


@upstream(
    "test_filesystem_backend.py::test_filesystem_download_multiple_files",
    "test_filesystem_backend_async.py::test_filesystem_adownload_multiple_files",
)
async def test_download_multiple_files(be: Ops) -> None:
    files = {f"{W}/file1.txt": b"File 1", f"{W}/file2.txt": b"File 2", f"{W}/subdir/file3.txt": b"File 3"}
    await seed(be, files)
    res = await be.download_files(list(files))
    assert [(d.path, d.content, d.error) for d in res] == [(p, c, None) for p, c in files.items()]


@upstream(
    "test_filesystem_backend.py::test_filesystem_upload_download_roundtrip",
    "test_filesystem_backend_async.py::test_filesystem_aupload_download_roundtrip",
)
async def test_upload_download_roundtrip(be: Ops) -> None:
    data = bytes(range(256))
    assert (await be.upload_files([(f"{W}/roundtrip.bin", data)]))[0].error is None
    [d] = await be.download_files([f"{W}/roundtrip.bin"])
    assert d.error is None and d.content == data


@upstream(
    "test_filesystem_backend.py::test_filesystem_download_errors",
    "test_filesystem_backend_async.py::test_filesystem_adownload_errors",
    "test_filesystem_backend.py::test_filesystem_download_directory_as_file",
)
async def test_download_errors(be: Ops) -> None:
    [d] = await be.download_files([f"{W}/nonexistent.txt"])
    assert (d.path, d.content, d.error) == (f"{W}/nonexistent.txt", None, "file_not_found")
    await seed(be, {f"{W}/testdir/inside.txt": "x"})  # a directory exists while something is in it
    [d] = await be.download_files([f"{W}/testdir"])
    assert (d.path, d.content, d.error) == (f"{W}/testdir", None, "is_directory")
    [d] = await be.download_files([f"{W}/../etc/passwd"])
    assert (d.content, d.error) == (None, "invalid_path")


@upstream(
    "test_filesystem_backend.py::test_filesystem_upload_errors",
    "test_filesystem_backend_async.py::test_filesystem_aupload_errors",
)
async def test_upload_errors(be: Ops) -> None:
    [u] = await be.upload_files([(f"{W}/../bad/path.txt", b"content")])
    assert u.error == "invalid_path"


@upstream(
    "test_filesystem_backend.py::test_filesystem_partial_success_upload",
    "test_filesystem_backend_async.py::test_filesystem_partial_success_aupload",
)
async def test_partial_success_upload(be: Ops) -> None:
    res = await be.upload_files([(f"{W}/valid1.txt", b"Valid content 1"), (f"{W}/../invalid.txt", b"Invalid path"), (f"{W}/valid2.txt", b"Valid content 2")])
    assert [r.error for r in res] == [None, "invalid_path", None]
    assert [d.error for d in await be.download_files([f"{W}/valid1.txt", f"{W}/valid2.txt"])] == [None, None]


@upstream(
    "test_filesystem_backend.py::test_filesystem_partial_success_download",
    "test_filesystem_backend_async.py::test_filesystem_partial_success_adownload",
)
async def test_partial_success_download(be: Ops) -> None:
    await seed(be, {f"{W}/exists.txt": b"I exist!"})
    res = await be.download_files([f"{W}/exists.txt", f"{W}/doesnotexist.txt", f"{W}/../invalid"])
    assert [(d.content, d.error) for d in res] == [(b"I exist!", None), (None, "file_not_found"), (None, "invalid_path")]


@upstream("test_filesystem_backend.py::test_filesystem_upload_to_existing_directory_path")
async def test_upload_to_existing_directory_path(be: Ops) -> None:
    await seed(be, {f"{W}/existing_dir/inside.txt": "x"})
    res = await be.upload_files([(f"{W}/existing_dir", b"file content")])
    assert len(res) == 1 and res[0].path == f"{W}/existing_dir"  # succeeding or failing, as upstream allows


@upstream("test_filesystem_backend.py::test_filesystem_upload_parent_is_file")
async def test_upload_parent_is_file(be: Ops) -> None:
    await seed(be, {f"{W}/parent.txt": "I am a file, not a directory"})
    [u] = await be.upload_files([(f"{W}/parent.txt/child.txt", b"child content")])
    assert u.path == f"{W}/parent.txt/child.txt" and u.error is not None


@upstream("test_filesystem_backend.py::test_grep_literal_search_with_special_chars")
@pytest.mark.parametrize(
    ("pattern", "expected_file"),
    [("def __init__(", "test1.py"), ("str | int", "test2.py"), ("[a-z]", "test3.py"), ("(.*)", "test3.py"), ("$19.99", "test4.txt"), ("user@example", "test4.txt")],
)
async def test_grep_literal_search_with_special_chars(be: Ops, pattern: str, expected_file: str) -> None:
    await seed(
        be,
        {
            f"{W}/test1.py": "def __init__(self, arg):\n    pass",
            f"{W}/test2.py": "@overload\ndef func(x: str | int):\n    return x",
            f"{W}/test3.py": "pattern = r'[a-z]+'\nregex_chars = '(.*)'",
            f"{W}/test4.txt": "Price: $19.99\nEmail: user@example.com",
        },
    )
    matches = (await be.grep(pattern, path=f"{W}/")).matches
    assert matches is not None and any(expected_file in m["path"] for m in matches)


@upstream(
    "test_filesystem_backend.py::test_grep_ripgrep_glob_with_directory_component",
    "test_filesystem_backend.py::test_grep_ripgrep_glob_virtual_mode",
)
async def test_grep_glob_with_directory_component(be: Ops) -> None:
    await seed(be, {f"{W}/docs/guide.md": "hello world\n", f"{W}/notes.md": "hello world\n"})
    assert paths((await be.grep("hello", path=W, glob="docs/*.md")).matches) == [f"{W}/docs/guide.md"]


@upstream("test_filesystem_backend.py::test_grep_on_single_file_path")
async def test_grep_on_single_file_path(be: Ops) -> None:
    await seed(be, {f"{W}/single.txt": "hello single\n"})
    r = await be.grep("hello", path=f"{W}/single.txt")
    assert r.error is None and r.matches is not None and any(m["path"].endswith("single.txt") for m in r.matches)


@upstream("test_filesystem_backend.py::test_python_fallback_caps_total_matches_across_files")
async def test_grep_caps_total_matches_across_files(be: Ops) -> None:
    await seed(be, {f"{W}/{n}.txt": "needle\nneedle\n" for n in "abc"})
    r = await be.grep("needle", path=W, max_count=3)
    assert r.truncated is True and r.matches is not None and len(r.matches) == 3


@upstream("test_filesystem_backend.py::test_python_fallback_no_cap_returns_all_matches")
async def test_grep_no_cap_returns_all_matches(be: Ops) -> None:
    await seed(be, {f"{W}/{n}.txt": "needle\nneedle\n" for n in "abc"})
    r = await be.grep("needle", path=W)
    assert r.truncated is False and r.matches is not None and len(r.matches) == 6


@upstream("test_filesystem_backend.py::test_python_fallback_below_cap_not_truncated")
async def test_grep_below_cap_not_truncated(be: Ops) -> None:
    await seed(be, {f"{W}/a.txt": "needle\nneedle\n"})
    r = await be.grep("needle", path=W, max_count=100)
    assert r.truncated is False and r.matches is not None and len(r.matches) == 2


@upstream("test_filesystem_backend.py::test_python_fallback_exact_cap_not_truncated")
async def test_grep_exact_cap_not_truncated(be: Ops) -> None:
    await seed(be, {f"{W}/a.txt": "needle\nneedle\n"})
    r = await be.grep("needle", path=W, max_count=2)
    assert r.truncated is False and r.matches is not None and len(r.matches) == 2


@upstream("test_filesystem_backend.py::test_glob_supports_brace_expansion")
async def test_glob_supports_brace_expansion(be: Ops) -> None:
    await seed(be, {f"{W}/a.py": "x", f"{W}/b.md": "y", f"{W}/c.txt": "z"})
    assert set(paths((await be.glob("*.{py,md}", path=f"{W}/")).matches)) == {f"{W}/a.py", f"{W}/b.md"}


@upstream(
    "test_filesystem_backend.py::TestWindowsPathHandling::test_ls_paths",
    "test_filesystem_backend.py::TestWindowsPathHandling::test_glob_paths",
    "test_filesystem_backend.py::TestWindowsPathHandling::test_grep_paths",
    "test_filesystem_backend.py::TestWindowsPathHandling::test_deeply_nested_path",
)
async def test_paths_use_forward_slashes(be: Ops) -> None:
    await seed(be, {f"{W}/src/main.py": "print('main')", f"{W}/src/utils/helper.py": "def help(): pass", f"{W}/a/b/c/d/file.txt": "content"})
    found = paths((await be.ls(f"{W}/src")).entries) + paths((await be.glob("**/*.py", path=f"{W}/")).matches)
    found += paths((await be.grep("def", path=f"{W}/")).matches) + paths((await be.ls(f"{W}/a/b/c/d")).entries)
    assert found and not any("\\" in p for p in found)


@upstream(
    "test_filesystem_backend.py::TestGrepPythonFallbackTimeout::test_python_search_matches_literal_substrings",
    "test_filesystem_backend.py::TestGrepPythonFallbackTimeout::test_python_search_does_not_match_regex_metacharacters",
    "test_filesystem_backend.py::TestGrepPythonFallbackTimeout::test_grep_fallback_treats_pattern_literally",
    via="upstream calls the private _python_search; the same outcomes are asked of grep()",
)
async def test_grep_is_literal(be: Ops) -> None:
    await seed(be, {f"{W}/code.py": "def __init__(self):\n    return [a-z]\n", f"{W}/x.txt": "axb\nab\n", f"{W}/f.txt": "a.b\naxb\n"})
    assert any("[a-z]" in m["text"] for m in (await be.grep("[a-z]", path=W)).matches or [])
    assert (await be.grep("a*b", path=W)).matches == []
    assert [m["text"] for m in (await be.grep("a.b", path=W)).matches or []] == ["a.b"]


@upstream(
    "test_filesystem_backend.py::TestGrepPythonFallbackTimeout::test_python_search_strips_carriage_returns",
    via="upstream calls the private _python_search; the same outcome is asked of grep()",
)
async def test_grep_strips_carriage_returns(be: Ops) -> None:
    await seed(be, {f"{W}/crlf.txt": b"hit me\r\nother\r\n"})
    assert (await be.grep("hit", path=W)).matches == [{"path": f"{W}/crlf.txt", "line": 1, "text": "hit me"}]


@upstream(
    "test_filesystem_backend.py::TestGrepPythonFallbackTimeout::test_python_search_skips_non_utf8_file",
    via="upstream calls the private _python_search; the same outcome is asked of grep()",
)
async def test_grep_skips_non_utf8_file(be: Ops) -> None:
    await seed(be, {f"{W}/good.txt": "needle here\n", f"{W}/bad.bin": b"\xff\xfe needle \x00\x80"})
    r = await be.grep("needle", path=W)
    assert r.error is None and r.matches == [{"path": f"{W}/good.txt", "line": 1, "text": "needle here"}]


@upstream(
    "test_filesystem_backend.py::TestGrepPythonFallbackTimeout::test_python_search_glob_filters_files",
    "test_filesystem_backend.py::TestGrepPythonFallbackTimeout::test_python_search_glob_matches_directory_components",
    "test_filesystem_backend.py::TestGrepPythonFallbackTimeout::test_python_search_accumulates_multiple_matches_per_file",
    via="upstream calls the private _python_search; the same outcomes are asked of grep()",
)
async def test_grep_glob_filters_and_accumulates(be: Ops) -> None:
    await seed(
        be,
        {
            f"{W}/match.py": "needle in py\n",
            f"{W}/skip.txt": "needle in txt\n",
            f"{W}/docs/a.md": "needle doc\n",
            f"{W}/src/b.md": "needle src\n",
            f"{W}/f.log": "needle\nno\nneedle\nno\nneedle\n",
        },
    )
    assert (await be.grep("needle", path=W, glob="*.py")).matches == [{"path": f"{W}/match.py", "line": 1, "text": "needle in py"}]
    assert (await be.grep("needle", path=W, glob="docs/*.md")).matches == [{"path": f"{W}/docs/a.md", "line": 1, "text": "needle doc"}]
    assert [m["line"] for m in (await be.grep("needle", path=W, glob="*.log")).matches or []] == [1, 3, 5]


INCLUDE_GLOB = {f"{W}/src/app/main.py": "import os\n", f"{W}/top.py": "import sys\n", f"{W}/README.md": "import note\n"}


@upstream("test_filesystem_backend.py::TestGrepPythonFallbackIncludeGlob::test_directory_glob_matches_nested")
async def test_include_glob_directory_matches_nested(be: Ops) -> None:
    await seed(be, INCLUDE_GLOB)
    assert sorted(paths((await be.grep("import", path=f"{W}/", glob="src/**/*.py")).matches)) == [f"{W}/src/app/main.py"]


@upstream("test_filesystem_backend.py::TestGrepPythonFallbackIncludeGlob::test_recursive_glob_matches_all_python")
async def test_include_glob_recursive_matches_all(be: Ops) -> None:
    await seed(be, INCLUDE_GLOB)
    assert sorted(paths((await be.grep("import", path=f"{W}/", glob="**/*.py")).matches)) == [f"{W}/src/app/main.py", f"{W}/top.py"]


@upstream("test_filesystem_backend.py::TestGrepPythonFallbackIncludeGlob::test_slashless_glob_matches_at_any_depth")
async def test_include_glob_slashless_matches_at_any_depth(be: Ops) -> None:
    await seed(be, INCLUDE_GLOB)
    assert sorted(paths((await be.grep("import", path=f"{W}/", glob="*.py")).matches)) == [f"{W}/src/app/main.py", f"{W}/top.py"]


@upstream("test_filesystem_backend.py::TestGrepPythonFallbackIncludeGlob::test_negative_glob")
async def test_include_glob_other_extension(be: Ops) -> None:
    await seed(be, INCLUDE_GLOB)
    assert paths((await be.grep("import", path=f"{W}/", glob="*.md")).matches) == [f"{W}/README.md"]


@upstream("test_filesystem_backend.py::TestGrepPythonFallbackIncludeGlob::test_glob_relative_to_search_root")
async def test_include_glob_relative_to_search_root(be: Ops) -> None:
    await seed(be, INCLUDE_GLOB)
    assert paths((await be.grep("import", path=f"{W}/src", glob="app/*.py")).matches) == [f"{W}/src/app/main.py"]


@upstream("test_filesystem_backend.py::TestEditCrlfNormalization::test_edit_normalizes_crlf_in_old_string")
async def test_edit_normalizes_crlf_in_old_string(be: Ops) -> None:
    await seed(be, {f"{W}/test.txt": "line1\nline2\nline3\n"})
    r = await be.edit(f"{W}/test.txt", "line1\r\nline2\r\n", "replaced\n")
    assert r.error is None and r.occurrences == 1
    assert (await be.download_files([f"{W}/test.txt"]))[0].content == b"replaced\nline3\n"


@upstream("test_filesystem_backend.py::TestEditCrlfNormalization::test_edit_normalizes_crlf_in_new_string")
async def test_edit_normalizes_crlf_in_new_string(be: Ops) -> None:
    await seed(be, {f"{W}/test.txt": "hello world\n"})
    assert (await be.edit(f"{W}/test.txt", "hello", "goodbye\r\n")).error is None
    assert b"\r" not in (await be.download_files([f"{W}/test.txt"]))[0].content


@upstream("test_filesystem_backend.py::TestEditCrlfNormalization::test_edit_crlf_with_replace_all")
async def test_edit_crlf_with_replace_all(be: Ops) -> None:
    await seed(be, {f"{W}/test.txt": "foo\nbar\nfoo\n"})
    r = await be.edit(f"{W}/test.txt", "foo\r\n", "baz\n", replace_all=True)
    assert r.error is None and r.occurrences == 2
    assert (await be.download_files([f"{W}/test.txt"]))[0].content == b"baz\nbar\nbaz\n"


@upstream("test_filesystem_backend.py::TestEditCrlfNormalization::test_edit_with_download_roundtrip_crlf")
async def test_edit_with_download_roundtrip_crlf(be: Ops) -> None:
    original = "## Summary\n\nHuman: hello\nAI: hi\n\n"
    await seed(be, {f"{W}/history.md": original})
    crlf = original.replace("\n", "\r\n")
    r = await be.edit(f"{W}/history.md", crlf, crlf + "## Summary 2\n\nHuman: next\nAI: ok\n\n")
    assert r.error is None and r.occurrences == 1
    final = text(await be.read(f"{W}/history.md"))
    assert "## Summary 2" in final and "Human: next" in final


@upstream(
    "test_filesystem_backend.py::test_ls_nonexistent_path_sets_error",
    "test_filesystem_backend_async.py::test_als_nonexistent_path_sets_error",
)
async def test_ls_nonexistent_path_sets_error(be: Ops) -> None:
    r = await be.ls(f"{W}/missing/")
    assert r.entries is None and r.error == f"Path '{W}/missing/': path_not_found"


@upstream(
    "test_filesystem_backend.py::test_ls_file_path_sets_not_a_directory_error",
    "test_filesystem_backend_async.py::test_als_file_path_sets_not_a_directory_error",
)
async def test_ls_file_path_sets_not_a_directory_error(be: Ops) -> None:
    await seed(be, {f"{W}/file.txt": "content"})
    r = await be.ls(f"{W}/file.txt")
    assert r.entries is None and r.error == f"Path '{W}/file.txt': not_a_directory"


@upstream(
    "test_filesystem_backend.py::test_ls_empty_directory_returns_empty_entries",
    "test_filesystem_backend_async.py::test_als_empty_directory_returns_empty_entries",
)
async def test_ls_empty_directory_returns_empty_entries(be: Ops) -> None:
    """The empty directory is a new thread's workspace: skillsvc keeps no
    other empty directories."""
    r = await be.ls(f"{W}/")
    assert r.error is None and r.entries == []


@upstream("test_filesystem_backend.py::TestReadTrailingNewlineRoundtrip::test_preserves_trailing_newline")
async def test_read_preserves_trailing_newline(be: Ops) -> None:
    await seed(be, {f"{W}/with_newline.txt": "foo\nbar\n"})
    assert text(await be.read(f"{W}/with_newline.txt")) == "foo\nbar\n"


@upstream("test_filesystem_backend.py::TestReadTrailingNewlineRoundtrip::test_preserves_no_trailing_newline")
async def test_read_preserves_no_trailing_newline(be: Ops) -> None:
    await seed(be, {f"{W}/no_newline.txt": "foo\nbar"})
    assert text(await be.read(f"{W}/no_newline.txt")) == "foo\nbar"


@upstream("test_filesystem_backend.py::TestReadTrailingNewlineRoundtrip::test_read_then_edit_eof_mismatch_surfaces_hint")
async def test_read_then_edit_eof_mismatch_surfaces_hint(be: Ops) -> None:
    await seed(be, {f"{W}/memory.md": "# Agent Role:\nyou are an assistant"})
    r = await be.edit(f"{W}/memory.md", "# Agent Role:\nyou are an assistant\n", "# Agent Role:\nyou are an assistant\nYou can do anything\n")
    assert r.error is not None and "old_string ends with a newline" in r.error
    assert text(await be.read(f"{W}/memory.md")) == "# Agent Role:\nyou are an assistant"


@upstream(
    "test_filesystem_backend.py::TestFilesystemDelete::test_delete_existing_file",
    "test_filesystem_backend.py::TestFilesystemDelete::test_adelete_existing_file",
)
async def test_delete_existing_file(be: Ops) -> None:
    await seed(be, {f"{W}/a.txt": "hello"})
    r = await be.delete(f"{W}/a.txt")
    assert isinstance(r, DeleteResult) and r.error is None and r.path == f"{W}/a.txt"
    assert (await be.read(f"{W}/a.txt")).error is not None


@upstream("test_filesystem_backend.py::TestFilesystemDelete::test_delete_missing_file_returns_error")
async def test_delete_missing_file_returns_error(be: Ops) -> None:
    r = await be.delete(f"{W}/missing.txt")
    assert r.path is None and r.error is not None and "not found" in r.error


@upstream(
    "test_filesystem_backend.py::TestFilesystemDelete::test_delete_directory_recursively",
    "test_filesystem_backend.py::TestFilesystemDelete::test_delete_directory_leaves_siblings",
)
async def test_delete_directory_recursively(be: Ops) -> None:
    await seed(be, {f"{W}/sub/b.txt": "b", f"{W}/sub/deep/d.txt": "d", f"{W}/keep.txt": "keep"})
    r = await be.delete(f"{W}/sub")
    assert r.error is None and r.path == f"{W}/sub"
    assert (await be.ls(f"{W}/sub")).error is not None
    assert (await be.read(f"{W}/keep.txt")).error is None


@upstream("test_filesystem_backend.py::TestFilesystemDelete::test_delete_only_removes_target")
async def test_delete_only_removes_target(be: Ops) -> None:
    await seed(be, {f"{W}/keep.txt": "keep", f"{W}/drop.txt": "drop"})
    assert (await be.delete(f"{W}/drop.txt")).error is None
    assert (await be.read(f"{W}/drop.txt")).error is not None and (await be.read(f"{W}/keep.txt")).error is None


# test_glob_semantics.py

TREE = {
    "a.py": "a",
    "sub/b.py": "b",
    "sub/nested/c.py": "c",
    "readme.md": "docs",
    ".hidden.py": "h",
    ".hidden/x.py": "x",
    ".github/workflows/ci.yml": "name: ci",
}
_BARE_PY = {"a.py", "sub/b.py", "sub/nested/c.py", ".hidden/x.py"}
MATRIX = [
    ("*.py", "/", _BARE_PY),
    ("**/*.py", "/", {"a.py", "sub/b.py", "sub/nested/c.py"}),
    ("*.md", "/", {"readme.md"}),
    ("sub/*.py", "/", {"sub/b.py"}),
    ("sub/**/*.py", "/", {"sub/b.py", "sub/nested/c.py"}),
    ("/*.py", "/", {"a.py"}),
    ("a.py/**", "/", set()),
    ("*.py", "/sub", {"sub/b.py", "sub/nested/c.py"}),
    ("*.yml", "/", {".github/workflows/ci.yml"}),
    ("**/*.yml", "/", set()),
    (".github/**/*.yml", "/", {".github/workflows/ci.yml"}),
    (".hidden.py", "/", {".hidden.py"}),
    (".*.py", "/", {".hidden.py"}),
    ("*", "/", {"a.py", "sub/b.py", "sub/nested/c.py", "readme.md", ".hidden/x.py", ".github/workflows/ci.yml"}),
    ("*.{py,md}", "/", _BARE_PY | {"readme.md"}),
    ("*.{yml,yaml}", "/", {".github/workflows/ci.yml"}),
    ("?.py", "/", _BARE_PY),
    ("[ab].py", "/", {"a.py", "sub/b.py"}),
    ("[!a].py", "/", {"sub/b.py", "sub/nested/c.py", ".hidden/x.py"}),
    ("[^a].py", "/", {"sub/b.py", "sub/nested/c.py", ".hidden/x.py"}),
]


def ws(rel: set[str]) -> set[str]:
    return {f"{W}/{p}" for p in rel}


@upstream(
    "test_glob_semantics.py::TestStateBackendGlobMatrix::test_matrix",
    "test_glob_semantics.py::TestStoreBackendGlobMatrix::test_matrix",
    "test_glob_semantics.py::TestFilesystemBackendGlobMatrix::test_matrix",
)
@pytest.mark.parametrize(("pattern", "path", "expected"), MATRIX)
async def test_glob_matrix(be: Ops, pattern: str, path: str, expected: set[str]) -> None:
    await seed(be, {f"{W}/{p}": c for p, c in TREE.items()})
    assert set(paths((await be.glob(pattern, path=W + path.rstrip("/"))).matches)) == ws(expected)


HIDDEN_TREE = {**TREE, ".hidden/nested/y.py": "y"}


@upstream(
    "test_glob_semantics.py::TestSandboxGlobScriptMatrix::test_hidden_dirs",
    via="upstream runs the sandbox's remote script; its expected outcomes are the shared contract, asked of glob()",
)
@pytest.mark.parametrize(
    ("pattern", "expected"),
    [
        ("*.py", {"a.py", "sub/b.py", "sub/nested/c.py", ".hidden/x.py", ".hidden/nested/y.py"}),
        ("**/*.py", {"a.py", "sub/b.py", "sub/nested/c.py"}),
        ("**/*.yml", set()),
        (".*.py", {".hidden.py"}),
        (".hidden/*.py", {".hidden/x.py"}),
        (".hidden/**/*.py", {".hidden/x.py", ".hidden/nested/y.py"}),
        (".github/**/*.yml", {".github/workflows/ci.yml"}),
    ],
)
async def test_glob_hidden_dirs(be: Ops, pattern: str, expected: set[str]) -> None:
    await seed(be, {f"{W}/{p}": c for p, c in HIDDEN_TREE.items()})
    assert set(paths((await be.glob(pattern, path=W)).matches)) == ws(expected)


@upstream(
    "test_glob_semantics.py::TestSandboxGlobScriptMatrix::test_matches_filesystem_backend",
    via="upstream holds the sandbox script to FilesystemBackend; here SkillsvcBackend is held to it",
)
@pytest.mark.parametrize(
    "pattern",
    [
        "*.py", "**/*.py", "**/*.yml", "*.yml", "*", ".*.py", ".hidden/*.py", ".hidden/**/*.py", ".github/**/*.yml",
        "/*.py", "*.{py,yml}", "{a,b}.py", "{a,{b,c}}.py", "?.py", "[ab].py", "[!a].py", "[^a].py", "sub/", "*.py/", "a//b.py",
    ],
)  # fmt: skip
async def test_glob_matches_filesystem_backend(be: Ops, tmp_path: Path, pattern: str) -> None:
    for p, c in HIDDEN_TREE.items():
        (tmp_path / p).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / p).write_text(c)
    await seed(be, {f"{W}/{p}": c for p, c in HIDDEN_TREE.items()})
    theirs = {W + i["path"] for i in FilesystemBackend(root_dir=str(tmp_path), virtual_mode=True).glob(pattern).matches or []}
    ours = await be.glob(pattern, path=W)
    assert ours.error is None and set(paths(ours.matches)) == theirs


@upstream("test_glob_semantics.py::TestSandboxGlobBraceExpansionLimit::test_under_limit_expands_normally")
async def test_glob_under_limit_expands_normally(be: Ops) -> None:
    await seed(be, {f"{W}/probe.py": "x"})
    assert paths((await be.glob("{a,}" * 4 + "probe.py", path=W)).matches) == [f"{W}/probe.py"]


@upstream("test_glob_semantics.py::TestSandboxGlobBraceExpansionLimit::test_non_expanding_braces_do_not_loop")
async def test_glob_non_expanding_braces(be: Ops) -> None:
    await seed(be, {f"{W}/{{probe}}.py": "x"})
    assert paths((await be.glob("{probe}.py", path=W)).matches) == [f"{W}/{{probe}}.py"]


@upstream("test_glob_semantics.py::TestSandboxGlobBraceExpansionLimit::test_nested_braces_expand_like_wcmatch")
async def test_glob_nested_braces(be: Ops) -> None:
    await seed(be, {f"{W}/{n}.py": "x" for n in "abcd"})
    assert sorted(paths((await be.glob("{a,{b,c}}.py", path=W)).matches)) == [f"{W}/a.py", f"{W}/b.py", f"{W}/c.py"]


@upstream("test_glob_semantics.py::TestSandboxGlobBraceExpansionLimit::test_single_element_group_still_expands_the_rest")
async def test_glob_single_element_group(be: Ops) -> None:
    await seed(be, {f"{W}/{{x}}a.py": "x", f"{W}/{{x}}b.py": "x"})
    assert sorted(paths((await be.glob("{x}{a,b}.py", path=W)).matches)) == [f"{W}/{{x}}a.py", f"{W}/{{x}}b.py"]


@pytest.mark.parametrize("pattern", ["../*.py", "sub/../a.py", "{a,}" * 18 + "probe.py"])
async def test_glob_refuses_what_deepagents_refuses(be: Ops, tmp_path: Path, pattern: str) -> None:
    """Not upstream's: a pattern deepagents' matcher refuses is refused with
    its message, and matches stay None."""
    theirs = FilesystemBackend(root_dir=str(tmp_path), virtual_mode=True).glob(pattern)
    ours = await be.glob(pattern, path=W)
    assert theirs.error and ours.error == theirs.error and ours.matches is None


# test_file_format.py

_STORED = "upstream looks at the item StoreBackend stored (its encoding); here the file is read back, which shows the same"
_VIA_BACKEND = "upstream calls the helper the in-memory backends grep with; the same outcome is asked of the backend's grep()"


@upstream("test_file_format.py::test_store_upload_binary", "test_file_format.py::test_store_upload_non_utf8_content_stored_as_base64", via=_STORED)
async def test_upload_binary_reads_as_base64(be: Ops) -> None:
    png = b"\x89PNG\r\n\x1a\n" + b"\xff\xfe" + b"\x00" * 50
    assert [r.error for r in await be.upload_files([(f"{W}/images/test.png", png)])] == [None]
    r = await be.read(f"{W}/images/test.png")
    assert r.file_data is not None and r.file_data["encoding"] == "base64"
    assert isinstance(r.file_data["content"], str) and base64.standard_b64decode(r.file_data["content"]) == png


@upstream("test_file_format.py::test_store_upload_download_binary_round_trip")
async def test_upload_download_binary_round_trip(be: Ops) -> None:
    original = b"\x89PNG\r\n\x1a\n" + bytes(range(256))
    await be.upload_files([(f"{W}/images/photo.png", original)])
    [d] = await be.download_files([f"{W}/images/photo.png"])
    assert d.error is None and d.content == original


@upstream("test_file_format.py::test_store_upload_text", "test_file_format.py::test_store_upload_utf8_content_stored_as_text", via=_STORED)
async def test_upload_text_reads_as_text(be: Ops) -> None:
    res = await be.upload_files([(f"{W}/docs/readme.txt", b"Hello, world!\nLine 2"), (f"{W}/docs/notes.txt", b"Hello, world!")])
    assert [r.error for r in res] == [None, None]
    r = await be.read(f"{W}/docs/readme.txt")
    assert r.file_data == {"content": "Hello, world!\nLine 2", "encoding": "utf-8"}
    assert (await be.read(f"{W}/docs/notes.txt")).file_data == {"content": "Hello, world!", "encoding": "utf-8"}


@upstream("test_file_format.py::test_grep_new_format", via=_VIA_BACKEND)
async def test_grep_format(be: Ops) -> None:
    await seed(be, {f"{W}/src/main.py": "import os\nprint('hello')\nimport sys"})
    assert (await be.grep("import", path=f"{W}/")).matches == [
        {"path": f"{W}/src/main.py", "line": 1, "text": "import os"},
        {"path": f"{W}/src/main.py", "line": 3, "text": "import sys"},
    ]


@upstream("test_file_format.py::test_grep_glob_filters_by_filename", via=_VIA_BACKEND)
async def test_grep_glob_filters_by_filename(be: Ops) -> None:
    await seed(be, {f"{W}/src/main.py": "import os", f"{W}/src/notes.txt": "import os"})
    assert paths((await be.grep("import", path=f"{W}/", glob="*.py")).matches) == [f"{W}/src/main.py"]


@upstream("test_file_format.py::test_grep_glob_brace_expansion", via=_VIA_BACKEND)
async def test_grep_glob_brace_expansion(be: Ops) -> None:
    await seed(be, {f"{W}/a.py": "hit", f"{W}/b.md": "hit", f"{W}/c.txt": "hit"})
    assert sorted(paths((await be.grep("hit", path=f"{W}/", glob="*.{py,md}")).matches)) == [f"{W}/a.py", f"{W}/b.md"]


@upstream("test_file_format.py::test_grep_glob_matches_nothing", via=_VIA_BACKEND)
async def test_grep_glob_matches_nothing(be: Ops) -> None:
    await seed(be, {f"{W}/a.py": "hit", f"{W}/b.md": "hit"})
    assert (await be.grep("hit", path=f"{W}/", glob="*.rs")).matches == []


@upstream("test_file_format.py::test_grep_glob_repeated_pattern_stays_correct", via=_VIA_BACKEND)
async def test_grep_glob_repeated_pattern_stays_correct(be: Ops) -> None:
    await seed(be, {f"{W}/first/x.py": "hit", f"{W}/first/x.md": "hit", f"{W}/second/y.py": "hit", f"{W}/second/y.txt": "hit"})
    assert paths((await be.grep("hit", path=f"{W}/first", glob="*.py")).matches) == [f"{W}/first/x.py"]
    assert paths((await be.grep("hit", path=f"{W}/second", glob="*.py")).matches) == [f"{W}/second/y.py"]


# test_composite_backend.py, test_composite_backend_async.py: the cases whose
# default backend is a FilesystemBackend, with SkillsvcBackend in its place.
# The default's files live under /workspace, so where upstream finds "/x.txt"
# in the root listing, the root lists "/workspace/" and that lists the file.


def composite(be: Ops, *routes: str) -> Ops:
    return be.on(CompositeBackend(default=be.backend, routes={r: store_route() for r in routes}))


def _c(name: str) -> tuple[str, str]:
    """A composite case and its async twin."""
    sync, asyn = name.split("|") if "|" in name else (name, name + "_async")
    return f"test_composite_backend.py::{sync}", f"test_composite_backend_async.py::{asyn}"


@upstream(*_c("test_composite_backend_filesystem_plus_store"))
async def test_composite_filesystem_plus_store(be: Ops) -> None:
    comp = composite(be, "/memories/")
    assert (await comp.write(f"{W}/hello.txt", "hello")).error is None
    assert (await comp.write("/memories/notes.md", "note")).error is None
    root = paths((await comp.ls("/")).entries)
    assert f"{W}/" in root and "/memories/" in root
    assert f"{W}/hello.txt" in paths((await comp.ls(W)).entries)
    assert "/memories/notes.md" in paths((await comp.ls("/memories/")).entries)
    assert "/memories/notes.md" in paths((await comp.ls("/memories")).entries)
    assert "/memories/notes.md" in paths((await comp.grep("note", path="/memories")).matches)
    assert "/memories/notes.md" in paths((await comp.glob("*.md", path="/memories")).matches)
    assert f"{W}/hello.txt" in paths((await comp.grep("hello", path="/")).matches)
    assert "/memories/notes.md" in paths((await comp.grep("note", path="/")).matches)
    everywhere = (await comp.glob("*.md", path="/")).matches
    assert "/memories/notes.md" in paths(everywhere)
    assert (await comp.glob("*.md")).matches == everywhere


@upstream(*_c("test_composite_backend_ls_nested_directories|test_composite_backend_als_nested_directories_async"))
async def test_composite_ls_nested_directories(be: Ops) -> None:
    await seed(be, {f"{W}/local.txt": "local file", f"{W}/src/main.py": "code", f"{W}/src/utils/helper.py": "utils"})
    comp = composite(be, "/memories/")
    for p, c in {"/memories/note1.txt": "note 1", "/memories/deep/note2.txt": "note 2", "/memories/deep/nested/note3.txt": "note 3"}.items():
        await comp.write(p, c)
    root = paths((await comp.ls("/")).entries)
    assert f"{W}/" in root and "/memories/" in root and "/memories/note1.txt" not in root
    top = paths((await comp.ls(f"{W}/")).entries)
    assert f"{W}/local.txt" in top and f"{W}/src/" in top and f"{W}/src/main.py" not in top
    src = paths((await comp.ls(f"{W}/src/")).entries)
    assert f"{W}/src/main.py" in src and f"{W}/src/utils/" in src and f"{W}/src/utils/helper.py" not in src
    mem = paths((await comp.ls("/memories/")).entries)
    assert "/memories/note1.txt" in mem and "/memories/deep/" in mem and "/memories/deep/note2.txt" not in mem
    deep = paths((await comp.ls("/memories/deep/")).entries)
    assert "/memories/deep/note2.txt" in deep and "/memories/deep/nested/" in deep and "/memories/deep/nested/note3.txt" not in deep


@upstream("test_composite_backend.py::test_composite_backend_ls_trailing_slash")
async def test_composite_ls_trailing_slash(be: Ops) -> None:
    await seed(be, {f"{W}/file.txt": "content"})
    comp = composite(be, "/store/")
    await comp.write("/store/item.txt", "store content")
    listing = paths((await comp.ls("/")).entries)
    assert listing == sorted(listing)
    assert (await comp.ls("/store/nonexistent/")).entries == []
    missing = await comp.ls("/nonexistent/")
    assert missing.entries is None and missing.error == "Path '/nonexistent/': path_not_found"
    assert paths((await comp.ls("/store/")).entries) == paths((await comp.ls("/store")).entries)


@upstream(*_c("test_composite_upload_routing|test_composite_aupload_routing_async"))
async def test_composite_upload_routing(be: Ops) -> None:
    comp = composite(be, "/memories/")
    res = await comp.upload_files([(f"{W}/file1.bin", b"Default content 1"), (f"{W}/file2.bin", b"Default content 2")])
    assert len(res) == 2 and all(r.error is None for r in res)
    assert [d.content for d in await be.download_files([f"{W}/file1.bin", f"{W}/file2.bin"])] == [b"Default content 1", b"Default content 2"]
    res = await comp.upload_files([("/memories/note1.txt", b"Memory content 1"), ("/memories/note2.txt", b"Memory content 2")])
    assert len(res) == 2 and all(r.error is None for r in res)
    assert "Memory content 1" in text(await comp.read("/memories/note1.txt"))


@upstream(*_c("test_composite_download_routing|test_composite_adownload_routing_async"))
async def test_composite_download_routing(be: Ops) -> None:
    await seed(be, {f"{W}/local.bin": b"Local binary data"})
    comp = composite(be, "/memories/")
    await comp.write("/memories/stored.txt", "Stored text data")
    [d] = await comp.download_files([f"{W}/local.bin"])
    assert (d.path, d.content, d.error) == (f"{W}/local.bin", b"Local binary data", None)


@upstream(*_c("test_composite_upload_download_roundtrip|test_composite_aupload_download_roundtrip_async"))
async def test_composite_upload_download_roundtrip(be: Ops) -> None:
    comp = composite(be)
    data = bytes(range(128))
    assert (await comp.upload_files([(f"{W}/test.bin", data)]))[0].error is None
    [d] = await comp.download_files([f"{W}/test.bin"])
    assert d.error is None and d.content == data


@upstream(*_c("test_composite_partial_success_upload|test_composite_partial_success_aupload_async"))
async def test_composite_partial_success_upload(be: Ops) -> None:
    comp = composite(be)
    res = await comp.upload_files([(f"{W}/valid1.bin", b"Valid 1"), (f"{W}/../invalid.bin", b"Invalid path"), (f"{W}/valid2.bin", b"Valid 2")])
    assert [r.error for r in res] == [None, "invalid_path", None]
    assert [d.error for d in await be.download_files([f"{W}/valid1.bin", f"{W}/valid2.bin"])] == [None, None]


@upstream(*_c("test_composite_partial_success_download|test_composite_partial_success_adownload_async"))
async def test_composite_partial_success_download(be: Ops) -> None:
    await seed(be, {f"{W}/exists.bin": b"I exist!"})
    res = await composite(be).download_files([f"{W}/exists.bin", f"{W}/doesnotexist.bin", f"{W}/../invalid"])
    assert [(d.content, d.error) for d in res] == [(b"I exist!", None), (None, "file_not_found"), (None, "invalid_path")]


@upstream(*_c("test_composite_upload_download_multiple_routes|test_composite_aupload_download_multiple_routes_async"))
async def test_composite_upload_download_multiple_routes(be: Ops) -> None:
    comp = composite(be, "/memories/", "/archive/")
    res = await comp.upload_files([(f"{W}/default.bin", b"Default backend"), ("/memories/mem.bin", b"Memory backend"), ("/archive/arch.bin", b"Archive backend")])
    assert len(res) == 3 and all(r.error is None for r in res)
    assert (await be.download_files([f"{W}/default.bin"]))[0].content == b"Default backend"


@upstream(*_c("test_composite_download_preserves_original_paths|test_composite_adownload_preserves_original_paths_async"))
async def test_composite_download_preserves_original_paths(be: Ops) -> None:
    await seed(be, {f"{W}/subdir/file.bin": b"Nested file"})
    [d] = await composite(be).download_files([f"{W}/subdir/file.bin"])
    assert (d.path, d.content) == (f"{W}/subdir/file.bin", b"Nested file")


@upstream(*_c("test_composite_grep_targeting_specific_route|test_composite_agrep_targeting_specific_route_async"))
async def test_composite_grep_targeting_specific_route(be: Ops) -> None:
    await seed(be, {f"{W}/default.txt": "default backend content", f"{W}/default2.txt": "more default stuff"})
    comp = composite(be, "/memories/")
    await comp.write("/memories/note1.txt", "memory content alpha")
    await comp.write("/memories/note2.txt", "memory content beta")
    found = paths((await comp.grep("memory", path="/memories/")).matches)
    assert "/memories/note1.txt" in found and "/memories/note2.txt" in found
    assert not any("/default" in p for p in found)


@upstream(*_c("test_composite_grep_with_glob_filter|test_composite_agrep_with_glob_filter_async"))
async def test_composite_grep_with_glob_filter(be: Ops) -> None:
    await seed(be, {f"{W}/script.py": "python code here", f"{W}/config.json": "json config here", f"{W}/readme.md": "markdown docs here"})
    comp = composite(be, "/memories/")
    await comp.write("/memories/notes.py", "python notes here")
    await comp.write("/memories/data.json", "json data here")
    found = paths((await comp.grep("here", path="/", glob="*.py")).matches)
    assert f"{W}/script.py" in found and "/memories/notes.py" in found
    assert not any(p.endswith((".json", ".md")) for p in found)


@upstream(*_c("test_composite_grep_with_glob_in_specific_route|test_composite_agrep_with_glob_in_specific_route_async"))
async def test_composite_grep_with_glob_in_specific_route(be: Ops) -> None:
    await seed(be, {f"{W}/local.md": "local markdown"})
    comp = composite(be, "/memories/")
    await comp.write("/memories/important.md", "important notes")
    await comp.write("/memories/data.txt", "text data")
    assert paths((await comp.grep("notes", path="/memories/", glob="*.md")).matches) == ["/memories/important.md"]


@upstream(*_c("test_composite_grep_with_path_none|test_composite_agrep_with_path_none_async"))
async def test_composite_grep_with_path_none(be: Ops) -> None:
    await seed(be, {f"{W}/file1.txt": "searchable content"})
    comp = composite(be, "/memories/")
    await comp.write("/memories/file2.txt", "searchable memory")
    none = sorted(paths((await comp.grep("searchable", path=None)).matches))
    assert none == sorted(paths((await comp.grep("searchable", path="/")).matches))
    assert len(none) == 2


@upstream(*_c("test_composite_grep_nested_path_in_route|test_composite_agrep_nested_path_in_route_async"))
async def test_composite_grep_nested_path_in_route(be: Ops) -> None:
    await seed(be, {f"{W}/local.txt": "local content"})
    comp = composite(be, "/memories/")
    for p, c in {"/memories/docs/readme.md": "documentation here", "/memories/docs/guide.md": "guide here", "/memories/notes.txt": "notes here"}.items():
        await comp.write(p, c)
    assert sorted(paths((await comp.grep("here", path="/memories/docs/")).matches)) == ["/memories/docs/guide.md", "/memories/docs/readme.md"]


@upstream(*_c("test_composite_grep_empty_results|test_composite_agrep_empty_results_async"))
async def test_composite_grep_empty_results(be: Ops) -> None:
    await seed(be, {f"{W}/file.txt": "some content"})
    comp = composite(be, "/memories/")
    await comp.write("/memories/note.txt", "memory content")
    assert (await comp.grep("nonexistent_pattern_xyz", path="/")).matches == []


@upstream(*_c("test_composite_grep_route_prefix_restoration|test_composite_agrep_route_prefix_restoration_async"))
async def test_composite_grep_route_prefix_restoration(be: Ops) -> None:
    comp = composite(be, "/memories/")
    await comp.write("/memories/alpha.txt", "test content alpha")
    await comp.write("/memories/beta.txt", "test content beta")
    routed = paths((await comp.grep("test", path="/memories/")).matches)
    assert routed and all(p.startswith("/memories/") and not p.startswith("/memories//") for p in routed)
    everywhere = paths((await comp.grep("test", path="/")).matches)
    assert all(p.startswith("/memories/") for p in everywhere if "/memories/" in p)


@upstream(*_c("test_composite_grep_multiple_matches_per_file|test_composite_agrep_multiple_matches_per_file_async"))
async def test_composite_grep_multiple_matches_per_file(be: Ops) -> None:
    await seed(be, {f"{W}/multi.txt": "line1 pattern\nline2 pattern\nline3 other"})
    found = [m for m in (await composite(be).grep("pattern", path="/")).matches or [] if "multi.txt" in m["path"]]
    assert sorted(m["line"] for m in found) == [1, 2]


@upstream(*_c("test_composite_grep_non_root_path_on_default_backend|test_composite_agrep_non_root_path_on_default_backend_async"))
async def test_composite_grep_non_root_path_on_default_backend(be: Ops) -> None:
    await seed(be, {f"{W}/work/project.txt": "project content", f"{W}/other.txt": "other content"})
    assert paths((await composite(be, "/memories/").grep("content", path=f"{W}/work")).matches) == [f"{W}/work/project.txt"]


# The accounting


def _upstream_cases() -> list[str]:
    lines = (Path(__file__).parent / "deepagents_cases.txt").read_text().splitlines()
    return [line for line in lines if line and not line.startswith("#")]


def test_every_upstream_case_is_accounted_for() -> None:
    cases = _upstream_cases()

    def not_applicable(case: str) -> str | None:
        return next((why for key, why in NOT_APPLICABLE.items() if case == key or (key.endswith("::") and case.startswith(key))), None)

    unaccounted = [c for c in cases if c not in COVERED and not_applicable(c) is None]
    both = [c for c in cases if c in COVERED and not_applicable(c) is not None]
    stale = [c for c in COVERED if c not in cases] + [k for k in NOT_APPLICABLE if not any(c == k or (k.endswith("::") and c.startswith(k)) for c in cases)]
    assert not unaccounted, f"upstream cases neither restated nor classified: {unaccounted}"
    assert not both, f"restated and classified not applicable: {both}"
    assert not stale, f"no longer upstream: {stale}"
