import datetime

from google.protobuf import timestamp_pb2 as _timestamp_pb2
from skillsvc.v1 import skills_pb2 as _skills_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class SkillScopeCompatibility(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    SKILL_SCOPE_COMPATIBILITY_UNSPECIFIED: _ClassVar[SkillScopeCompatibility]
    SKILL_SCOPE_COMPATIBILITY_EMPTY_OR_HARNESS: _ClassVar[SkillScopeCompatibility]
    SKILL_SCOPE_COMPATIBILITY_HARNESS: _ClassVar[SkillScopeCompatibility]
SKILL_SCOPE_COMPATIBILITY_UNSPECIFIED: SkillScopeCompatibility
SKILL_SCOPE_COMPATIBILITY_EMPTY_OR_HARNESS: SkillScopeCompatibility
SKILL_SCOPE_COMPATIBILITY_HARNESS: SkillScopeCompatibility

class LibraryRef(_message.Message):
    __slots__ = ("user", "shared", "team")
    USER_FIELD_NUMBER: _ClassVar[int]
    SHARED_FIELD_NUMBER: _ClassVar[int]
    TEAM_FIELD_NUMBER: _ClassVar[int]
    user: str
    shared: bool
    team: str
    def __init__(self, user: _Optional[str] = ..., shared: _Optional[bool] = ..., team: _Optional[str] = ...) -> None: ...

class DropSkillIndexRequest(_message.Message):
    __slots__ = ("user", "shared", "team")
    USER_FIELD_NUMBER: _ClassVar[int]
    SHARED_FIELD_NUMBER: _ClassVar[int]
    TEAM_FIELD_NUMBER: _ClassVar[int]
    user: str
    shared: bool
    team: str
    def __init__(self, user: _Optional[str] = ..., shared: _Optional[bool] = ..., team: _Optional[str] = ...) -> None: ...

class DropSkillIndexResponse(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class SetUserSkillEnabledRequest(_message.Message):
    __slots__ = ("user", "path", "enabled")
    USER_FIELD_NUMBER: _ClassVar[int]
    PATH_FIELD_NUMBER: _ClassVar[int]
    ENABLED_FIELD_NUMBER: _ClassVar[int]
    user: str
    path: str
    enabled: bool
    def __init__(self, user: _Optional[str] = ..., path: _Optional[str] = ..., enabled: _Optional[bool] = ...) -> None: ...

class SetUserSkillEnabledResponse(_message.Message):
    __slots__ = ("skill",)
    SKILL_FIELD_NUMBER: _ClassVar[int]
    skill: _skills_pb2.SkillSummary
    def __init__(self, skill: _Optional[_Union[_skills_pb2.SkillSummary, _Mapping]] = ...) -> None: ...

class PutLibraryFileRequest(_message.Message):
    __slots__ = ("library", "path", "data", "if_match", "must_not_exist", "mode")
    LIBRARY_FIELD_NUMBER: _ClassVar[int]
    PATH_FIELD_NUMBER: _ClassVar[int]
    DATA_FIELD_NUMBER: _ClassVar[int]
    IF_MATCH_FIELD_NUMBER: _ClassVar[int]
    MUST_NOT_EXIST_FIELD_NUMBER: _ClassVar[int]
    MODE_FIELD_NUMBER: _ClassVar[int]
    library: LibraryRef
    path: str
    data: bytes
    if_match: str
    must_not_exist: bool
    mode: int
    def __init__(self, library: _Optional[_Union[LibraryRef, _Mapping]] = ..., path: _Optional[str] = ..., data: _Optional[bytes] = ..., if_match: _Optional[str] = ..., must_not_exist: _Optional[bool] = ..., mode: _Optional[int] = ...) -> None: ...

class PutLibraryFileResponse(_message.Message):
    __slots__ = ("etag", "size")
    ETAG_FIELD_NUMBER: _ClassVar[int]
    SIZE_FIELD_NUMBER: _ClassVar[int]
    etag: str
    size: int
    def __init__(self, etag: _Optional[str] = ..., size: _Optional[int] = ...) -> None: ...

class DeleteLibraryFileRequest(_message.Message):
    __slots__ = ("library", "path")
    LIBRARY_FIELD_NUMBER: _ClassVar[int]
    PATH_FIELD_NUMBER: _ClassVar[int]
    library: LibraryRef
    path: str
    def __init__(self, library: _Optional[_Union[LibraryRef, _Mapping]] = ..., path: _Optional[str] = ...) -> None: ...

class DeleteLibraryFileResponse(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class SetSkillProtectedRequest(_message.Message):
    __slots__ = ("library", "name", "protected")
    LIBRARY_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    PROTECTED_FIELD_NUMBER: _ClassVar[int]
    library: LibraryRef
    name: str
    protected: bool
    def __init__(self, library: _Optional[_Union[LibraryRef, _Mapping]] = ..., name: _Optional[str] = ..., protected: _Optional[bool] = ...) -> None: ...

class SetSkillProtectedResponse(_message.Message):
    __slots__ = ("names",)
    NAMES_FIELD_NUMBER: _ClassVar[int]
    names: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, names: _Optional[_Iterable[str]] = ...) -> None: ...

class ListProtectedSkillsRequest(_message.Message):
    __slots__ = ("library",)
    LIBRARY_FIELD_NUMBER: _ClassVar[int]
    library: LibraryRef
    def __init__(self, library: _Optional[_Union[LibraryRef, _Mapping]] = ...) -> None: ...

class ListProtectedSkillsResponse(_message.Message):
    __slots__ = ("names",)
    NAMES_FIELD_NUMBER: _ClassVar[int]
    names: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, names: _Optional[_Iterable[str]] = ...) -> None: ...

class SkillScopeRule(_message.Message):
    __slots__ = ("categories", "tags", "names")
    CATEGORIES_FIELD_NUMBER: _ClassVar[int]
    TAGS_FIELD_NUMBER: _ClassVar[int]
    NAMES_FIELD_NUMBER: _ClassVar[int]
    categories: _containers.RepeatedScalarFieldContainer[str]
    tags: _containers.RepeatedScalarFieldContainer[str]
    names: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, categories: _Optional[_Iterable[str]] = ..., tags: _Optional[_Iterable[str]] = ..., names: _Optional[_Iterable[str]] = ...) -> None: ...

class SkillScope(_message.Message):
    __slots__ = ("name", "include", "exclude", "compatibility")
    NAME_FIELD_NUMBER: _ClassVar[int]
    INCLUDE_FIELD_NUMBER: _ClassVar[int]
    EXCLUDE_FIELD_NUMBER: _ClassVar[int]
    COMPATIBILITY_FIELD_NUMBER: _ClassVar[int]
    name: str
    include: SkillScopeRule
    exclude: SkillScopeRule
    compatibility: SkillScopeCompatibility
    def __init__(self, name: _Optional[str] = ..., include: _Optional[_Union[SkillScopeRule, _Mapping]] = ..., exclude: _Optional[_Union[SkillScopeRule, _Mapping]] = ..., compatibility: _Optional[_Union[SkillScopeCompatibility, str]] = ...) -> None: ...

class SetSkillScopeRequest(_message.Message):
    __slots__ = ("library", "scope")
    LIBRARY_FIELD_NUMBER: _ClassVar[int]
    SCOPE_FIELD_NUMBER: _ClassVar[int]
    library: LibraryRef
    scope: SkillScope
    def __init__(self, library: _Optional[_Union[LibraryRef, _Mapping]] = ..., scope: _Optional[_Union[SkillScope, _Mapping]] = ...) -> None: ...

class SetSkillScopeResponse(_message.Message):
    __slots__ = ("scopes",)
    SCOPES_FIELD_NUMBER: _ClassVar[int]
    scopes: _containers.RepeatedCompositeFieldContainer[SkillScope]
    def __init__(self, scopes: _Optional[_Iterable[_Union[SkillScope, _Mapping]]] = ...) -> None: ...

class DeleteSkillScopeRequest(_message.Message):
    __slots__ = ("library", "name")
    LIBRARY_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    library: LibraryRef
    name: str
    def __init__(self, library: _Optional[_Union[LibraryRef, _Mapping]] = ..., name: _Optional[str] = ...) -> None: ...

class DeleteSkillScopeResponse(_message.Message):
    __slots__ = ("scopes",)
    SCOPES_FIELD_NUMBER: _ClassVar[int]
    scopes: _containers.RepeatedCompositeFieldContainer[SkillScope]
    def __init__(self, scopes: _Optional[_Iterable[_Union[SkillScope, _Mapping]]] = ...) -> None: ...

class ListSkillScopesRequest(_message.Message):
    __slots__ = ("library",)
    LIBRARY_FIELD_NUMBER: _ClassVar[int]
    library: LibraryRef
    def __init__(self, library: _Optional[_Union[LibraryRef, _Mapping]] = ...) -> None: ...

class ListSkillScopesResponse(_message.Message):
    __slots__ = ("scopes",)
    SCOPES_FIELD_NUMBER: _ClassVar[int]
    scopes: _containers.RepeatedCompositeFieldContainer[SkillScope]
    def __init__(self, scopes: _Optional[_Iterable[_Union[SkillScope, _Mapping]]] = ...) -> None: ...

class CollectLibraryGarbageRequest(_message.Message):
    __slots__ = ("library", "dry_run")
    LIBRARY_FIELD_NUMBER: _ClassVar[int]
    DRY_RUN_FIELD_NUMBER: _ClassVar[int]
    library: LibraryRef
    dry_run: bool
    def __init__(self, library: _Optional[_Union[LibraryRef, _Mapping]] = ..., dry_run: _Optional[bool] = ...) -> None: ...

class CollectLibraryGarbageResponse(_message.Message):
    __slots__ = ("blobs_deleted", "bytes_freed", "blobs_kept", "snapshots_deleted", "pins_deleted", "dry_run", "unreadable_records")
    BLOBS_DELETED_FIELD_NUMBER: _ClassVar[int]
    BYTES_FREED_FIELD_NUMBER: _ClassVar[int]
    BLOBS_KEPT_FIELD_NUMBER: _ClassVar[int]
    SNAPSHOTS_DELETED_FIELD_NUMBER: _ClassVar[int]
    PINS_DELETED_FIELD_NUMBER: _ClassVar[int]
    DRY_RUN_FIELD_NUMBER: _ClassVar[int]
    UNREADABLE_RECORDS_FIELD_NUMBER: _ClassVar[int]
    blobs_deleted: int
    bytes_freed: int
    blobs_kept: int
    snapshots_deleted: int
    pins_deleted: int
    dry_run: bool
    unreadable_records: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, blobs_deleted: _Optional[int] = ..., bytes_freed: _Optional[int] = ..., blobs_kept: _Optional[int] = ..., snapshots_deleted: _Optional[int] = ..., pins_deleted: _Optional[int] = ..., dry_run: _Optional[bool] = ..., unreadable_records: _Optional[_Iterable[str]] = ...) -> None: ...

class DeleteSkillVersionsRequest(_message.Message):
    __slots__ = ("library", "name", "versions")
    LIBRARY_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    VERSIONS_FIELD_NUMBER: _ClassVar[int]
    library: LibraryRef
    name: str
    versions: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, library: _Optional[_Union[LibraryRef, _Mapping]] = ..., name: _Optional[str] = ..., versions: _Optional[_Iterable[str]] = ...) -> None: ...

class DeleteSkillVersionsResponse(_message.Message):
    __slots__ = ("deleted",)
    DELETED_FIELD_NUMBER: _ClassVar[int]
    deleted: int
    def __init__(self, deleted: _Optional[int] = ...) -> None: ...

class RejectProposalsRequest(_message.Message):
    __slots__ = ("library", "name", "author", "created_before", "comment", "delete")
    LIBRARY_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    AUTHOR_FIELD_NUMBER: _ClassVar[int]
    CREATED_BEFORE_FIELD_NUMBER: _ClassVar[int]
    COMMENT_FIELD_NUMBER: _ClassVar[int]
    DELETE_FIELD_NUMBER: _ClassVar[int]
    library: LibraryRef
    name: str
    author: str
    created_before: _timestamp_pb2.Timestamp
    comment: str
    delete: bool
    def __init__(self, library: _Optional[_Union[LibraryRef, _Mapping]] = ..., name: _Optional[str] = ..., author: _Optional[str] = ..., created_before: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., comment: _Optional[str] = ..., delete: _Optional[bool] = ...) -> None: ...

class RejectProposalsResponse(_message.Message):
    __slots__ = ("rejected", "deleted", "unreadable_records")
    REJECTED_FIELD_NUMBER: _ClassVar[int]
    DELETED_FIELD_NUMBER: _ClassVar[int]
    UNREADABLE_RECORDS_FIELD_NUMBER: _ClassVar[int]
    rejected: int
    deleted: int
    unreadable_records: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, rejected: _Optional[int] = ..., deleted: _Optional[int] = ..., unreadable_records: _Optional[_Iterable[str]] = ...) -> None: ...
