from google.protobuf import struct_pb2 as _struct_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class SkillView(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    SKILL_VIEW_UNSPECIFIED: _ClassVar[SkillView]
    SKILL_VIEW_BASIC: _ClassVar[SkillView]
    SKILL_VIEW_FULL: _ClassVar[SkillView]

class ArchiveLayout(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    ARCHIVE_LAYOUT_UNSPECIFIED: _ClassVar[ArchiveLayout]
    ARCHIVE_LAYOUT_FOLDER: _ClassVar[ArchiveLayout]
    ARCHIVE_LAYOUT_ROOT: _ClassVar[ArchiveLayout]
SKILL_VIEW_UNSPECIFIED: SkillView
SKILL_VIEW_BASIC: SkillView
SKILL_VIEW_FULL: SkillView
ARCHIVE_LAYOUT_UNSPECIFIED: ArchiveLayout
ARCHIVE_LAYOUT_FOLDER: ArchiveLayout
ARCHIVE_LAYOUT_ROOT: ArchiveLayout

class SkillSummary(_message.Message):
    __slots__ = ("path", "location", "name", "description", "category", "layer", "version", "license", "compatibility", "allowed_tools", "metadata", "extra_fields", "etag", "disabled", "warnings", "errors", "display_name", "manifest", "frontmatter_json", "manifest_digest", "artifact", "provenance")
    class MetadataEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    PATH_FIELD_NUMBER: _ClassVar[int]
    LOCATION_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    DESCRIPTION_FIELD_NUMBER: _ClassVar[int]
    CATEGORY_FIELD_NUMBER: _ClassVar[int]
    LAYER_FIELD_NUMBER: _ClassVar[int]
    VERSION_FIELD_NUMBER: _ClassVar[int]
    LICENSE_FIELD_NUMBER: _ClassVar[int]
    COMPATIBILITY_FIELD_NUMBER: _ClassVar[int]
    ALLOWED_TOOLS_FIELD_NUMBER: _ClassVar[int]
    METADATA_FIELD_NUMBER: _ClassVar[int]
    EXTRA_FIELDS_FIELD_NUMBER: _ClassVar[int]
    ETAG_FIELD_NUMBER: _ClassVar[int]
    DISABLED_FIELD_NUMBER: _ClassVar[int]
    WARNINGS_FIELD_NUMBER: _ClassVar[int]
    ERRORS_FIELD_NUMBER: _ClassVar[int]
    DISPLAY_NAME_FIELD_NUMBER: _ClassVar[int]
    MANIFEST_FIELD_NUMBER: _ClassVar[int]
    FRONTMATTER_JSON_FIELD_NUMBER: _ClassVar[int]
    MANIFEST_DIGEST_FIELD_NUMBER: _ClassVar[int]
    ARTIFACT_FIELD_NUMBER: _ClassVar[int]
    PROVENANCE_FIELD_NUMBER: _ClassVar[int]
    path: str
    location: str
    name: str
    description: str
    category: str
    layer: str
    version: str
    license: str
    compatibility: str
    allowed_tools: _containers.RepeatedScalarFieldContainer[str]
    metadata: _containers.ScalarMap[str, str]
    extra_fields: _struct_pb2.Struct
    etag: str
    disabled: bool
    warnings: _containers.RepeatedScalarFieldContainer[str]
    errors: _containers.RepeatedScalarFieldContainer[str]
    display_name: str
    manifest: SkillManifest
    frontmatter_json: str
    manifest_digest: str
    artifact: SkillArtifact
    provenance: Provenance
    def __init__(self, path: _Optional[str] = ..., location: _Optional[str] = ..., name: _Optional[str] = ..., description: _Optional[str] = ..., category: _Optional[str] = ..., layer: _Optional[str] = ..., version: _Optional[str] = ..., license: _Optional[str] = ..., compatibility: _Optional[str] = ..., allowed_tools: _Optional[_Iterable[str]] = ..., metadata: _Optional[_Mapping[str, str]] = ..., extra_fields: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ..., etag: _Optional[str] = ..., disabled: _Optional[bool] = ..., warnings: _Optional[_Iterable[str]] = ..., errors: _Optional[_Iterable[str]] = ..., display_name: _Optional[str] = ..., manifest: _Optional[_Union[SkillManifest, _Mapping]] = ..., frontmatter_json: _Optional[str] = ..., manifest_digest: _Optional[str] = ..., artifact: _Optional[_Union[SkillArtifact, _Mapping]] = ..., provenance: _Optional[_Union[Provenance, _Mapping]] = ...) -> None: ...

class SkillArtifact(_message.Message):
    __slots__ = ("type", "digest")
    TYPE_FIELD_NUMBER: _ClassVar[int]
    DIGEST_FIELD_NUMBER: _ClassVar[int]
    type: str
    digest: str
    def __init__(self, type: _Optional[str] = ..., digest: _Optional[str] = ...) -> None: ...

class ManifestFile(_message.Message):
    __slots__ = ("path", "size", "sha256", "mode")
    PATH_FIELD_NUMBER: _ClassVar[int]
    SIZE_FIELD_NUMBER: _ClassVar[int]
    SHA256_FIELD_NUMBER: _ClassVar[int]
    MODE_FIELD_NUMBER: _ClassVar[int]
    path: str
    size: int
    sha256: str
    mode: int
    def __init__(self, path: _Optional[str] = ..., size: _Optional[int] = ..., sha256: _Optional[str] = ..., mode: _Optional[int] = ...) -> None: ...

class SkillManifest(_message.Message):
    __slots__ = ("files", "total_bytes", "file_count", "over_limits")
    FILES_FIELD_NUMBER: _ClassVar[int]
    TOTAL_BYTES_FIELD_NUMBER: _ClassVar[int]
    FILE_COUNT_FIELD_NUMBER: _ClassVar[int]
    OVER_LIMITS_FIELD_NUMBER: _ClassVar[int]
    files: _containers.RepeatedCompositeFieldContainer[ManifestFile]
    total_bytes: int
    file_count: int
    over_limits: bool
    def __init__(self, files: _Optional[_Iterable[_Union[ManifestFile, _Mapping]]] = ..., total_bytes: _Optional[int] = ..., file_count: _Optional[int] = ..., over_limits: _Optional[bool] = ...) -> None: ...

class ListCategoriesRequest(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class CategoryCount(_message.Message):
    __slots__ = ("name", "skill_count")
    NAME_FIELD_NUMBER: _ClassVar[int]
    SKILL_COUNT_FIELD_NUMBER: _ClassVar[int]
    name: str
    skill_count: int
    def __init__(self, name: _Optional[str] = ..., skill_count: _Optional[int] = ...) -> None: ...

class ListCategoriesResponse(_message.Message):
    __slots__ = ("categories",)
    CATEGORIES_FIELD_NUMBER: _ClassVar[int]
    categories: _containers.RepeatedCompositeFieldContainer[CategoryCount]
    def __init__(self, categories: _Optional[_Iterable[_Union[CategoryCount, _Mapping]]] = ...) -> None: ...

class ListSkillsRequest(_message.Message):
    __slots__ = ("category", "page_size", "page_token", "include_invalid", "include_disabled", "view", "scope", "include_artifacts", "include_provenance")
    CATEGORY_FIELD_NUMBER: _ClassVar[int]
    PAGE_SIZE_FIELD_NUMBER: _ClassVar[int]
    PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    INCLUDE_INVALID_FIELD_NUMBER: _ClassVar[int]
    INCLUDE_DISABLED_FIELD_NUMBER: _ClassVar[int]
    VIEW_FIELD_NUMBER: _ClassVar[int]
    SCOPE_FIELD_NUMBER: _ClassVar[int]
    INCLUDE_ARTIFACTS_FIELD_NUMBER: _ClassVar[int]
    INCLUDE_PROVENANCE_FIELD_NUMBER: _ClassVar[int]
    category: str
    page_size: int
    page_token: str
    include_invalid: bool
    include_disabled: bool
    view: SkillView
    scope: str
    include_artifacts: bool
    include_provenance: bool
    def __init__(self, category: _Optional[str] = ..., page_size: _Optional[int] = ..., page_token: _Optional[str] = ..., include_invalid: _Optional[bool] = ..., include_disabled: _Optional[bool] = ..., view: _Optional[_Union[SkillView, str]] = ..., scope: _Optional[str] = ..., include_artifacts: _Optional[bool] = ..., include_provenance: _Optional[bool] = ...) -> None: ...

class ListSkillsResponse(_message.Message):
    __slots__ = ("skills", "next_page_token", "library_digest")
    SKILLS_FIELD_NUMBER: _ClassVar[int]
    NEXT_PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    LIBRARY_DIGEST_FIELD_NUMBER: _ClassVar[int]
    skills: _containers.RepeatedCompositeFieldContainer[SkillSummary]
    next_page_token: str
    library_digest: str
    def __init__(self, skills: _Optional[_Iterable[_Union[SkillSummary, _Mapping]]] = ..., next_page_token: _Optional[str] = ..., library_digest: _Optional[str] = ...) -> None: ...

class FormatSkillsRequest(_message.Message):
    __slots__ = ("category", "char_budget", "max_skills", "format", "group_by_category", "search_tool", "query", "scope")
    CATEGORY_FIELD_NUMBER: _ClassVar[int]
    CHAR_BUDGET_FIELD_NUMBER: _ClassVar[int]
    MAX_SKILLS_FIELD_NUMBER: _ClassVar[int]
    FORMAT_FIELD_NUMBER: _ClassVar[int]
    GROUP_BY_CATEGORY_FIELD_NUMBER: _ClassVar[int]
    SEARCH_TOOL_FIELD_NUMBER: _ClassVar[int]
    QUERY_FIELD_NUMBER: _ClassVar[int]
    SCOPE_FIELD_NUMBER: _ClassVar[int]
    category: str
    char_budget: int
    max_skills: int
    format: str
    group_by_category: bool
    search_tool: str
    query: str
    scope: str
    def __init__(self, category: _Optional[str] = ..., char_budget: _Optional[int] = ..., max_skills: _Optional[int] = ..., format: _Optional[str] = ..., group_by_category: _Optional[bool] = ..., search_tool: _Optional[str] = ..., query: _Optional[str] = ..., scope: _Optional[str] = ...) -> None: ...

class FormatSkillsResponse(_message.Message):
    __slots__ = ("text", "included", "omitted", "shortened", "library_digest")
    TEXT_FIELD_NUMBER: _ClassVar[int]
    INCLUDED_FIELD_NUMBER: _ClassVar[int]
    OMITTED_FIELD_NUMBER: _ClassVar[int]
    SHORTENED_FIELD_NUMBER: _ClassVar[int]
    LIBRARY_DIGEST_FIELD_NUMBER: _ClassVar[int]
    text: str
    included: int
    omitted: int
    shortened: int
    library_digest: str
    def __init__(self, text: _Optional[str] = ..., included: _Optional[int] = ..., omitted: _Optional[int] = ..., shortened: _Optional[int] = ..., library_digest: _Optional[str] = ...) -> None: ...

class SkillFile(_message.Message):
    __slots__ = ("path", "size", "binary")
    PATH_FIELD_NUMBER: _ClassVar[int]
    SIZE_FIELD_NUMBER: _ClassVar[int]
    BINARY_FIELD_NUMBER: _ClassVar[int]
    path: str
    size: int
    binary: bool
    def __init__(self, path: _Optional[str] = ..., size: _Optional[int] = ..., binary: _Optional[bool] = ...) -> None: ...

class GetSkillRequest(_message.Message):
    __slots__ = ("path", "version")
    PATH_FIELD_NUMBER: _ClassVar[int]
    VERSION_FIELD_NUMBER: _ClassVar[int]
    path: str
    version: str
    def __init__(self, path: _Optional[str] = ..., version: _Optional[str] = ...) -> None: ...

class GetSkillResponse(_message.Message):
    __slots__ = ("skill", "raw", "frontmatter", "body", "files", "files_omitted", "provenance")
    SKILL_FIELD_NUMBER: _ClassVar[int]
    RAW_FIELD_NUMBER: _ClassVar[int]
    FRONTMATTER_FIELD_NUMBER: _ClassVar[int]
    BODY_FIELD_NUMBER: _ClassVar[int]
    FILES_FIELD_NUMBER: _ClassVar[int]
    FILES_OMITTED_FIELD_NUMBER: _ClassVar[int]
    PROVENANCE_FIELD_NUMBER: _ClassVar[int]
    skill: SkillSummary
    raw: str
    frontmatter: _struct_pb2.Struct
    body: str
    files: _containers.RepeatedCompositeFieldContainer[SkillFile]
    files_omitted: int
    provenance: Provenance
    def __init__(self, skill: _Optional[_Union[SkillSummary, _Mapping]] = ..., raw: _Optional[str] = ..., frontmatter: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ..., body: _Optional[str] = ..., files: _Optional[_Iterable[_Union[SkillFile, _Mapping]]] = ..., files_omitted: _Optional[int] = ..., provenance: _Optional[_Union[Provenance, _Mapping]] = ...) -> None: ...

class Provenance(_message.Message):
    __slots__ = ("version", "publisher", "approver", "scan_verdict", "signature", "signature_key", "out_of_band")
    VERSION_FIELD_NUMBER: _ClassVar[int]
    PUBLISHER_FIELD_NUMBER: _ClassVar[int]
    APPROVER_FIELD_NUMBER: _ClassVar[int]
    SCAN_VERDICT_FIELD_NUMBER: _ClassVar[int]
    SIGNATURE_FIELD_NUMBER: _ClassVar[int]
    SIGNATURE_KEY_FIELD_NUMBER: _ClassVar[int]
    OUT_OF_BAND_FIELD_NUMBER: _ClassVar[int]
    version: str
    publisher: str
    approver: str
    scan_verdict: str
    signature: str
    signature_key: str
    out_of_band: bool
    def __init__(self, version: _Optional[str] = ..., publisher: _Optional[str] = ..., approver: _Optional[str] = ..., scan_verdict: _Optional[str] = ..., signature: _Optional[str] = ..., signature_key: _Optional[str] = ..., out_of_band: _Optional[bool] = ...) -> None: ...

class RenderSkillRequest(_message.Message):
    __slots__ = ("path", "arguments", "base_dir", "version")
    PATH_FIELD_NUMBER: _ClassVar[int]
    ARGUMENTS_FIELD_NUMBER: _ClassVar[int]
    BASE_DIR_FIELD_NUMBER: _ClassVar[int]
    VERSION_FIELD_NUMBER: _ClassVar[int]
    path: str
    arguments: str
    base_dir: str
    version: str
    def __init__(self, path: _Optional[str] = ..., arguments: _Optional[str] = ..., base_dir: _Optional[str] = ..., version: _Optional[str] = ...) -> None: ...

class RenderSkillResponse(_message.Message):
    __slots__ = ("text", "skill")
    TEXT_FIELD_NUMBER: _ClassVar[int]
    SKILL_FIELD_NUMBER: _ClassVar[int]
    text: str
    skill: SkillSummary
    def __init__(self, text: _Optional[str] = ..., skill: _Optional[_Union[SkillSummary, _Mapping]] = ...) -> None: ...

class ReadSkillFileRequest(_message.Message):
    __slots__ = ("path", "file", "download_tool", "version")
    PATH_FIELD_NUMBER: _ClassVar[int]
    FILE_FIELD_NUMBER: _ClassVar[int]
    DOWNLOAD_TOOL_FIELD_NUMBER: _ClassVar[int]
    VERSION_FIELD_NUMBER: _ClassVar[int]
    path: str
    file: str
    download_tool: str
    version: str
    def __init__(self, path: _Optional[str] = ..., file: _Optional[str] = ..., download_tool: _Optional[str] = ..., version: _Optional[str] = ...) -> None: ...

class ReadSkillFileResponse(_message.Message):
    __slots__ = ("path", "content")
    PATH_FIELD_NUMBER: _ClassVar[int]
    CONTENT_FIELD_NUMBER: _ClassVar[int]
    path: str
    content: str
    def __init__(self, path: _Optional[str] = ..., content: _Optional[str] = ...) -> None: ...

class SearchSkillsRequest(_message.Message):
    __slots__ = ("query", "limit", "category", "min_relevance", "scope", "include_provenance")
    QUERY_FIELD_NUMBER: _ClassVar[int]
    LIMIT_FIELD_NUMBER: _ClassVar[int]
    CATEGORY_FIELD_NUMBER: _ClassVar[int]
    MIN_RELEVANCE_FIELD_NUMBER: _ClassVar[int]
    SCOPE_FIELD_NUMBER: _ClassVar[int]
    INCLUDE_PROVENANCE_FIELD_NUMBER: _ClassVar[int]
    query: str
    limit: int
    category: str
    min_relevance: float
    scope: str
    include_provenance: bool
    def __init__(self, query: _Optional[str] = ..., limit: _Optional[int] = ..., category: _Optional[str] = ..., min_relevance: _Optional[float] = ..., scope: _Optional[str] = ..., include_provenance: _Optional[bool] = ...) -> None: ...

class ScoredSkill(_message.Message):
    __slots__ = ("skill", "score", "relevance", "alternates")
    SKILL_FIELD_NUMBER: _ClassVar[int]
    SCORE_FIELD_NUMBER: _ClassVar[int]
    RELEVANCE_FIELD_NUMBER: _ClassVar[int]
    ALTERNATES_FIELD_NUMBER: _ClassVar[int]
    skill: SkillSummary
    score: float
    relevance: float
    alternates: _containers.RepeatedCompositeFieldContainer[SkillAlternate]
    def __init__(self, skill: _Optional[_Union[SkillSummary, _Mapping]] = ..., score: _Optional[float] = ..., relevance: _Optional[float] = ..., alternates: _Optional[_Iterable[_Union[SkillAlternate, _Mapping]]] = ...) -> None: ...

class SkillAlternate(_message.Message):
    __slots__ = ("path", "name", "layer")
    PATH_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    LAYER_FIELD_NUMBER: _ClassVar[int]
    path: str
    name: str
    layer: str
    def __init__(self, path: _Optional[str] = ..., name: _Optional[str] = ..., layer: _Optional[str] = ...) -> None: ...

class SearchSkillsResponse(_message.Message):
    __slots__ = ("results", "truncated", "library_digest")
    RESULTS_FIELD_NUMBER: _ClassVar[int]
    TRUNCATED_FIELD_NUMBER: _ClassVar[int]
    LIBRARY_DIGEST_FIELD_NUMBER: _ClassVar[int]
    results: _containers.RepeatedCompositeFieldContainer[ScoredSkill]
    truncated: bool
    library_digest: str
    def __init__(self, results: _Optional[_Iterable[_Union[ScoredSkill, _Mapping]]] = ..., truncated: _Optional[bool] = ..., library_digest: _Optional[str] = ...) -> None: ...

class ExportSkillRequest(_message.Message):
    __slots__ = ("path", "version", "layout")
    PATH_FIELD_NUMBER: _ClassVar[int]
    VERSION_FIELD_NUMBER: _ClassVar[int]
    LAYOUT_FIELD_NUMBER: _ClassVar[int]
    path: str
    version: str
    layout: ArchiveLayout
    def __init__(self, path: _Optional[str] = ..., version: _Optional[str] = ..., layout: _Optional[_Union[ArchiveLayout, str]] = ...) -> None: ...

class ExportSkillResponse(_message.Message):
    __slots__ = ("data",)
    DATA_FIELD_NUMBER: _ClassVar[int]
    data: bytes
    def __init__(self, data: _Optional[bytes] = ...) -> None: ...

class SetSkillEnabledRequest(_message.Message):
    __slots__ = ("path", "enabled")
    PATH_FIELD_NUMBER: _ClassVar[int]
    ENABLED_FIELD_NUMBER: _ClassVar[int]
    path: str
    enabled: bool
    def __init__(self, path: _Optional[str] = ..., enabled: _Optional[bool] = ...) -> None: ...

class SetSkillEnabledResponse(_message.Message):
    __slots__ = ("skill",)
    SKILL_FIELD_NUMBER: _ClassVar[int]
    skill: SkillSummary
    def __init__(self, skill: _Optional[_Union[SkillSummary, _Mapping]] = ...) -> None: ...

class WatchSkillsRequest(_message.Message):
    __slots__ = ("since_digest",)
    SINCE_DIGEST_FIELD_NUMBER: _ClassVar[int]
    since_digest: str
    def __init__(self, since_digest: _Optional[str] = ...) -> None: ...

class SkillChange(_message.Message):
    __slots__ = ("kind", "name", "path", "layer", "manifest_digest")
    class Kind(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
        __slots__ = ()
        KIND_UNSPECIFIED: _ClassVar[SkillChange.Kind]
        KIND_ADDED: _ClassVar[SkillChange.Kind]
        KIND_CHANGED: _ClassVar[SkillChange.Kind]
        KIND_REMOVED: _ClassVar[SkillChange.Kind]
        KIND_ENABLED: _ClassVar[SkillChange.Kind]
        KIND_DISABLED: _ClassVar[SkillChange.Kind]
    KIND_UNSPECIFIED: SkillChange.Kind
    KIND_ADDED: SkillChange.Kind
    KIND_CHANGED: SkillChange.Kind
    KIND_REMOVED: SkillChange.Kind
    KIND_ENABLED: SkillChange.Kind
    KIND_DISABLED: SkillChange.Kind
    KIND_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    PATH_FIELD_NUMBER: _ClassVar[int]
    LAYER_FIELD_NUMBER: _ClassVar[int]
    MANIFEST_DIGEST_FIELD_NUMBER: _ClassVar[int]
    kind: SkillChange.Kind
    name: str
    path: str
    layer: str
    manifest_digest: str
    def __init__(self, kind: _Optional[_Union[SkillChange.Kind, str]] = ..., name: _Optional[str] = ..., path: _Optional[str] = ..., layer: _Optional[str] = ..., manifest_digest: _Optional[str] = ...) -> None: ...

class WatchSkillsResponse(_message.Message):
    __slots__ = ("library_digest", "changes", "reset")
    LIBRARY_DIGEST_FIELD_NUMBER: _ClassVar[int]
    CHANGES_FIELD_NUMBER: _ClassVar[int]
    RESET_FIELD_NUMBER: _ClassVar[int]
    library_digest: str
    changes: _containers.RepeatedCompositeFieldContainer[SkillChange]
    reset: bool
    def __init__(self, library_digest: _Optional[str] = ..., changes: _Optional[_Iterable[_Union[SkillChange, _Mapping]]] = ..., reset: _Optional[bool] = ...) -> None: ...
