import datetime

from google.protobuf import timestamp_pb2 as _timestamp_pb2
from skillsvc.v1 import admin_pb2 as _admin_pb2
from skillsvc.v1 import skills_pb2 as _skills_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class VersionState(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    VERSION_STATE_UNSPECIFIED: _ClassVar[VersionState]
    VERSION_STATE_PUBLISHED: _ClassVar[VersionState]
    VERSION_STATE_PENDING: _ClassVar[VersionState]
    VERSION_STATE_REJECTED: _ClassVar[VersionState]
VERSION_STATE_UNSPECIFIED: VersionState
VERSION_STATE_PUBLISHED: VersionState
VERSION_STATE_PENDING: VersionState
VERSION_STATE_REJECTED: VersionState

class SkillProblem(_message.Message):
    __slots__ = ("severity", "file", "field", "rule", "value", "message")
    class Severity(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
        __slots__ = ()
        SEVERITY_UNSPECIFIED: _ClassVar[SkillProblem.Severity]
        SEVERITY_ERROR: _ClassVar[SkillProblem.Severity]
        SEVERITY_WARNING: _ClassVar[SkillProblem.Severity]
    SEVERITY_UNSPECIFIED: SkillProblem.Severity
    SEVERITY_ERROR: SkillProblem.Severity
    SEVERITY_WARNING: SkillProblem.Severity
    SEVERITY_FIELD_NUMBER: _ClassVar[int]
    FILE_FIELD_NUMBER: _ClassVar[int]
    FIELD_FIELD_NUMBER: _ClassVar[int]
    RULE_FIELD_NUMBER: _ClassVar[int]
    VALUE_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_FIELD_NUMBER: _ClassVar[int]
    severity: SkillProblem.Severity
    file: str
    field: str
    rule: str
    value: str
    message: str
    def __init__(self, severity: _Optional[_Union[SkillProblem.Severity, str]] = ..., file: _Optional[str] = ..., field: _Optional[str] = ..., rule: _Optional[str] = ..., value: _Optional[str] = ..., message: _Optional[str] = ...) -> None: ...

class SkillProblems(_message.Message):
    __slots__ = ("problems",)
    PROBLEMS_FIELD_NUMBER: _ClassVar[int]
    problems: _containers.RepeatedCompositeFieldContainer[SkillProblem]
    def __init__(self, problems: _Optional[_Iterable[_Union[SkillProblem, _Mapping]]] = ...) -> None: ...

class SkillVersion(_message.Message):
    __slots__ = ("id", "name", "category", "library", "create_time", "author", "total_bytes", "file_count", "labels", "state", "message", "manifest", "reviewer", "review_time", "review_comment", "problems", "signatures")
    ID_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    CATEGORY_FIELD_NUMBER: _ClassVar[int]
    LIBRARY_FIELD_NUMBER: _ClassVar[int]
    CREATE_TIME_FIELD_NUMBER: _ClassVar[int]
    AUTHOR_FIELD_NUMBER: _ClassVar[int]
    TOTAL_BYTES_FIELD_NUMBER: _ClassVar[int]
    FILE_COUNT_FIELD_NUMBER: _ClassVar[int]
    LABELS_FIELD_NUMBER: _ClassVar[int]
    STATE_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_FIELD_NUMBER: _ClassVar[int]
    MANIFEST_FIELD_NUMBER: _ClassVar[int]
    REVIEWER_FIELD_NUMBER: _ClassVar[int]
    REVIEW_TIME_FIELD_NUMBER: _ClassVar[int]
    REVIEW_COMMENT_FIELD_NUMBER: _ClassVar[int]
    PROBLEMS_FIELD_NUMBER: _ClassVar[int]
    SIGNATURES_FIELD_NUMBER: _ClassVar[int]
    id: str
    name: str
    category: str
    library: _admin_pb2.LibraryRef
    create_time: _timestamp_pb2.Timestamp
    author: str
    total_bytes: int
    file_count: int
    labels: _containers.RepeatedScalarFieldContainer[str]
    state: VersionState
    message: str
    manifest: _skills_pb2.SkillManifest
    reviewer: str
    review_time: _timestamp_pb2.Timestamp
    review_comment: str
    problems: _containers.RepeatedCompositeFieldContainer[SkillProblem]
    signatures: _containers.RepeatedCompositeFieldContainer[VersionSignature]
    def __init__(self, id: _Optional[str] = ..., name: _Optional[str] = ..., category: _Optional[str] = ..., library: _Optional[_Union[_admin_pb2.LibraryRef, _Mapping]] = ..., create_time: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., author: _Optional[str] = ..., total_bytes: _Optional[int] = ..., file_count: _Optional[int] = ..., labels: _Optional[_Iterable[str]] = ..., state: _Optional[_Union[VersionState, str]] = ..., message: _Optional[str] = ..., manifest: _Optional[_Union[_skills_pb2.SkillManifest, _Mapping]] = ..., reviewer: _Optional[str] = ..., review_time: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., review_comment: _Optional[str] = ..., problems: _Optional[_Iterable[_Union[SkillProblem, _Mapping]]] = ..., signatures: _Optional[_Iterable[_Union[VersionSignature, _Mapping]]] = ...) -> None: ...

class VersionSignature(_message.Message):
    __slots__ = ("key_id", "key_name", "attached_by", "attach_time", "bundle", "public_key")
    KEY_ID_FIELD_NUMBER: _ClassVar[int]
    KEY_NAME_FIELD_NUMBER: _ClassVar[int]
    ATTACHED_BY_FIELD_NUMBER: _ClassVar[int]
    ATTACH_TIME_FIELD_NUMBER: _ClassVar[int]
    BUNDLE_FIELD_NUMBER: _ClassVar[int]
    PUBLIC_KEY_FIELD_NUMBER: _ClassVar[int]
    key_id: str
    key_name: str
    attached_by: str
    attach_time: _timestamp_pb2.Timestamp
    bundle: bytes
    public_key: bytes
    def __init__(self, key_id: _Optional[str] = ..., key_name: _Optional[str] = ..., attached_by: _Optional[str] = ..., attach_time: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., bundle: _Optional[bytes] = ..., public_key: _Optional[bytes] = ...) -> None: ...

class PublishSkillRequest(_message.Message):
    __slots__ = ("header", "chunk")
    HEADER_FIELD_NUMBER: _ClassVar[int]
    CHUNK_FIELD_NUMBER: _ClassVar[int]
    header: PublishSkillHeader
    chunk: FileChunk
    def __init__(self, header: _Optional[_Union[PublishSkillHeader, _Mapping]] = ..., chunk: _Optional[_Union[FileChunk, _Mapping]] = ...) -> None: ...

class PublishSkillHeader(_message.Message):
    __slots__ = ("library", "category", "name", "labels", "message", "validate_only", "if_latest")
    LIBRARY_FIELD_NUMBER: _ClassVar[int]
    CATEGORY_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    LABELS_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_FIELD_NUMBER: _ClassVar[int]
    VALIDATE_ONLY_FIELD_NUMBER: _ClassVar[int]
    IF_LATEST_FIELD_NUMBER: _ClassVar[int]
    library: _admin_pb2.LibraryRef
    category: str
    name: str
    labels: _containers.RepeatedScalarFieldContainer[str]
    message: str
    validate_only: bool
    if_latest: str
    def __init__(self, library: _Optional[_Union[_admin_pb2.LibraryRef, _Mapping]] = ..., category: _Optional[str] = ..., name: _Optional[str] = ..., labels: _Optional[_Iterable[str]] = ..., message: _Optional[str] = ..., validate_only: _Optional[bool] = ..., if_latest: _Optional[str] = ...) -> None: ...

class FileChunk(_message.Message):
    __slots__ = ("path", "data", "mode")
    PATH_FIELD_NUMBER: _ClassVar[int]
    DATA_FIELD_NUMBER: _ClassVar[int]
    MODE_FIELD_NUMBER: _ClassVar[int]
    path: str
    data: bytes
    mode: int
    def __init__(self, path: _Optional[str] = ..., data: _Optional[bytes] = ..., mode: _Optional[int] = ...) -> None: ...

class PublishSkillResponse(_message.Message):
    __slots__ = ("version", "problems", "skill", "removed_files", "valid", "evals")
    VERSION_FIELD_NUMBER: _ClassVar[int]
    PROBLEMS_FIELD_NUMBER: _ClassVar[int]
    SKILL_FIELD_NUMBER: _ClassVar[int]
    REMOVED_FILES_FIELD_NUMBER: _ClassVar[int]
    VALID_FIELD_NUMBER: _ClassVar[int]
    EVALS_FIELD_NUMBER: _ClassVar[int]
    version: SkillVersion
    problems: _containers.RepeatedCompositeFieldContainer[SkillProblem]
    skill: _skills_pb2.SkillSummary
    removed_files: _containers.RepeatedScalarFieldContainer[str]
    valid: bool
    evals: _containers.RepeatedCompositeFieldContainer[TriggerEval]
    def __init__(self, version: _Optional[_Union[SkillVersion, _Mapping]] = ..., problems: _Optional[_Iterable[_Union[SkillProblem, _Mapping]]] = ..., skill: _Optional[_Union[_skills_pb2.SkillSummary, _Mapping]] = ..., removed_files: _Optional[_Iterable[str]] = ..., valid: _Optional[bool] = ..., evals: _Optional[_Iterable[_Union[TriggerEval, _Mapping]]] = ...) -> None: ...

class TriggerEval(_message.Message):
    __slots__ = ("query", "should_trigger", "rank", "top_path", "top_name")
    QUERY_FIELD_NUMBER: _ClassVar[int]
    SHOULD_TRIGGER_FIELD_NUMBER: _ClassVar[int]
    RANK_FIELD_NUMBER: _ClassVar[int]
    TOP_PATH_FIELD_NUMBER: _ClassVar[int]
    TOP_NAME_FIELD_NUMBER: _ClassVar[int]
    query: str
    should_trigger: bool
    rank: int
    top_path: str
    top_name: str
    def __init__(self, query: _Optional[str] = ..., should_trigger: _Optional[bool] = ..., rank: _Optional[int] = ..., top_path: _Optional[str] = ..., top_name: _Optional[str] = ...) -> None: ...

class DeleteSkillRequest(_message.Message):
    __slots__ = ("library", "name", "if_latest")
    LIBRARY_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    IF_LATEST_FIELD_NUMBER: _ClassVar[int]
    library: _admin_pb2.LibraryRef
    name: str
    if_latest: str
    def __init__(self, library: _Optional[_Union[_admin_pb2.LibraryRef, _Mapping]] = ..., name: _Optional[str] = ..., if_latest: _Optional[str] = ...) -> None: ...

class DeleteSkillResponse(_message.Message):
    __slots__ = ("removed_files",)
    REMOVED_FILES_FIELD_NUMBER: _ClassVar[int]
    removed_files: int
    def __init__(self, removed_files: _Optional[int] = ...) -> None: ...

class ListSkillVersionsRequest(_message.Message):
    __slots__ = ("library", "name", "page_size", "page_token", "state")
    LIBRARY_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    PAGE_SIZE_FIELD_NUMBER: _ClassVar[int]
    PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    STATE_FIELD_NUMBER: _ClassVar[int]
    library: _admin_pb2.LibraryRef
    name: str
    page_size: int
    page_token: str
    state: VersionState
    def __init__(self, library: _Optional[_Union[_admin_pb2.LibraryRef, _Mapping]] = ..., name: _Optional[str] = ..., page_size: _Optional[int] = ..., page_token: _Optional[str] = ..., state: _Optional[_Union[VersionState, str]] = ...) -> None: ...

class ListSkillVersionsResponse(_message.Message):
    __slots__ = ("versions", "next_page_token", "labels")
    class LabelsEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    VERSIONS_FIELD_NUMBER: _ClassVar[int]
    NEXT_PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    LABELS_FIELD_NUMBER: _ClassVar[int]
    versions: _containers.RepeatedCompositeFieldContainer[SkillVersion]
    next_page_token: str
    labels: _containers.ScalarMap[str, str]
    def __init__(self, versions: _Optional[_Iterable[_Union[SkillVersion, _Mapping]]] = ..., next_page_token: _Optional[str] = ..., labels: _Optional[_Mapping[str, str]] = ...) -> None: ...

class GetSkillVersionRequest(_message.Message):
    __slots__ = ("library", "name", "version")
    LIBRARY_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    VERSION_FIELD_NUMBER: _ClassVar[int]
    library: _admin_pb2.LibraryRef
    name: str
    version: str
    def __init__(self, library: _Optional[_Union[_admin_pb2.LibraryRef, _Mapping]] = ..., name: _Optional[str] = ..., version: _Optional[str] = ...) -> None: ...

class GetSkillVersionResponse(_message.Message):
    __slots__ = ("version", "raw")
    VERSION_FIELD_NUMBER: _ClassVar[int]
    RAW_FIELD_NUMBER: _ClassVar[int]
    version: SkillVersion
    raw: str
    def __init__(self, version: _Optional[_Union[SkillVersion, _Mapping]] = ..., raw: _Optional[str] = ...) -> None: ...

class AttachSignatureRequest(_message.Message):
    __slots__ = ("library", "name", "version", "bundle", "public_key")
    LIBRARY_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    VERSION_FIELD_NUMBER: _ClassVar[int]
    BUNDLE_FIELD_NUMBER: _ClassVar[int]
    PUBLIC_KEY_FIELD_NUMBER: _ClassVar[int]
    library: _admin_pb2.LibraryRef
    name: str
    version: str
    bundle: bytes
    public_key: bytes
    def __init__(self, library: _Optional[_Union[_admin_pb2.LibraryRef, _Mapping]] = ..., name: _Optional[str] = ..., version: _Optional[str] = ..., bundle: _Optional[bytes] = ..., public_key: _Optional[bytes] = ...) -> None: ...

class AttachSignatureResponse(_message.Message):
    __slots__ = ("version",)
    VERSION_FIELD_NUMBER: _ClassVar[int]
    version: SkillVersion
    def __init__(self, version: _Optional[_Union[SkillVersion, _Mapping]] = ...) -> None: ...

class SetSkillLabelRequest(_message.Message):
    __slots__ = ("library", "name", "label", "version")
    LIBRARY_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    LABEL_FIELD_NUMBER: _ClassVar[int]
    VERSION_FIELD_NUMBER: _ClassVar[int]
    library: _admin_pb2.LibraryRef
    name: str
    label: str
    version: str
    def __init__(self, library: _Optional[_Union[_admin_pb2.LibraryRef, _Mapping]] = ..., name: _Optional[str] = ..., label: _Optional[str] = ..., version: _Optional[str] = ...) -> None: ...

class SetSkillLabelResponse(_message.Message):
    __slots__ = ("version",)
    VERSION_FIELD_NUMBER: _ClassVar[int]
    version: SkillVersion
    def __init__(self, version: _Optional[_Union[SkillVersion, _Mapping]] = ...) -> None: ...

class RollbackSkillRequest(_message.Message):
    __slots__ = ("library", "name", "version", "if_latest")
    LIBRARY_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    VERSION_FIELD_NUMBER: _ClassVar[int]
    IF_LATEST_FIELD_NUMBER: _ClassVar[int]
    library: _admin_pb2.LibraryRef
    name: str
    version: str
    if_latest: str
    def __init__(self, library: _Optional[_Union[_admin_pb2.LibraryRef, _Mapping]] = ..., name: _Optional[str] = ..., version: _Optional[str] = ..., if_latest: _Optional[str] = ...) -> None: ...

class RollbackSkillResponse(_message.Message):
    __slots__ = ("version", "skill", "removed_files")
    VERSION_FIELD_NUMBER: _ClassVar[int]
    SKILL_FIELD_NUMBER: _ClassVar[int]
    REMOVED_FILES_FIELD_NUMBER: _ClassVar[int]
    version: SkillVersion
    skill: _skills_pb2.SkillSummary
    removed_files: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, version: _Optional[_Union[SkillVersion, _Mapping]] = ..., skill: _Optional[_Union[_skills_pb2.SkillSummary, _Mapping]] = ..., removed_files: _Optional[_Iterable[str]] = ...) -> None: ...

class ReviewSkillVersionRequest(_message.Message):
    __slots__ = ("library", "name", "version", "approve", "comment")
    LIBRARY_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    VERSION_FIELD_NUMBER: _ClassVar[int]
    APPROVE_FIELD_NUMBER: _ClassVar[int]
    COMMENT_FIELD_NUMBER: _ClassVar[int]
    library: _admin_pb2.LibraryRef
    name: str
    version: str
    approve: bool
    comment: str
    def __init__(self, library: _Optional[_Union[_admin_pb2.LibraryRef, _Mapping]] = ..., name: _Optional[str] = ..., version: _Optional[str] = ..., approve: _Optional[bool] = ..., comment: _Optional[str] = ...) -> None: ...

class ReviewSkillVersionResponse(_message.Message):
    __slots__ = ("version", "skill", "removed_files")
    VERSION_FIELD_NUMBER: _ClassVar[int]
    SKILL_FIELD_NUMBER: _ClassVar[int]
    REMOVED_FILES_FIELD_NUMBER: _ClassVar[int]
    version: SkillVersion
    skill: _skills_pb2.SkillSummary
    removed_files: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, version: _Optional[_Union[SkillVersion, _Mapping]] = ..., skill: _Optional[_Union[_skills_pb2.SkillSummary, _Mapping]] = ..., removed_files: _Optional[_Iterable[str]] = ...) -> None: ...
