import datetime

from google.protobuf import timestamp_pb2 as _timestamp_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class GlobHidden(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    GLOB_HIDDEN_UNSPECIFIED: _ClassVar[GlobHidden]
    GLOB_HIDDEN_INCLUDE: _ClassVar[GlobHidden]
    GLOB_HIDDEN_EXPLICIT: _ClassVar[GlobHidden]
GLOB_HIDDEN_UNSPECIFIED: GlobHidden
GLOB_HIDDEN_INCLUDE: GlobHidden
GLOB_HIDDEN_EXPLICIT: GlobHidden

class FileInfo(_message.Message):
    __slots__ = ("path", "name", "is_dir", "size", "modified", "etag")
    PATH_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    IS_DIR_FIELD_NUMBER: _ClassVar[int]
    SIZE_FIELD_NUMBER: _ClassVar[int]
    MODIFIED_FIELD_NUMBER: _ClassVar[int]
    ETAG_FIELD_NUMBER: _ClassVar[int]
    path: str
    name: str
    is_dir: bool
    size: int
    modified: _timestamp_pb2.Timestamp
    etag: str
    def __init__(self, path: _Optional[str] = ..., name: _Optional[str] = ..., is_dir: _Optional[bool] = ..., size: _Optional[int] = ..., modified: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., etag: _Optional[str] = ...) -> None: ...

class ListRequest(_message.Message):
    __slots__ = ("path", "page_size", "page_token")
    PATH_FIELD_NUMBER: _ClassVar[int]
    PAGE_SIZE_FIELD_NUMBER: _ClassVar[int]
    PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    path: str
    page_size: int
    page_token: str
    def __init__(self, path: _Optional[str] = ..., page_size: _Optional[int] = ..., page_token: _Optional[str] = ...) -> None: ...

class ListResponse(_message.Message):
    __slots__ = ("entries", "next_page_token")
    ENTRIES_FIELD_NUMBER: _ClassVar[int]
    NEXT_PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    entries: _containers.RepeatedCompositeFieldContainer[FileInfo]
    next_page_token: str
    def __init__(self, entries: _Optional[_Iterable[_Union[FileInfo, _Mapping]]] = ..., next_page_token: _Optional[str] = ...) -> None: ...

class StatRequest(_message.Message):
    __slots__ = ("path",)
    PATH_FIELD_NUMBER: _ClassVar[int]
    path: str
    def __init__(self, path: _Optional[str] = ...) -> None: ...

class StatResponse(_message.Message):
    __slots__ = ("info",)
    INFO_FIELD_NUMBER: _ClassVar[int]
    info: FileInfo
    def __init__(self, info: _Optional[_Union[FileInfo, _Mapping]] = ...) -> None: ...

class ReadRequest(_message.Message):
    __slots__ = ("path", "offset", "limit", "line_numbers")
    PATH_FIELD_NUMBER: _ClassVar[int]
    OFFSET_FIELD_NUMBER: _ClassVar[int]
    LIMIT_FIELD_NUMBER: _ClassVar[int]
    LINE_NUMBERS_FIELD_NUMBER: _ClassVar[int]
    path: str
    offset: int
    limit: int
    line_numbers: bool
    def __init__(self, path: _Optional[str] = ..., offset: _Optional[int] = ..., limit: _Optional[int] = ..., line_numbers: _Optional[bool] = ...) -> None: ...

class ReadResponse(_message.Message):
    __slots__ = ("path", "content", "total_lines", "next_offset", "etag", "ends_with_newline")
    PATH_FIELD_NUMBER: _ClassVar[int]
    CONTENT_FIELD_NUMBER: _ClassVar[int]
    TOTAL_LINES_FIELD_NUMBER: _ClassVar[int]
    NEXT_OFFSET_FIELD_NUMBER: _ClassVar[int]
    ETAG_FIELD_NUMBER: _ClassVar[int]
    ENDS_WITH_NEWLINE_FIELD_NUMBER: _ClassVar[int]
    path: str
    content: str
    total_lines: int
    next_offset: int
    etag: str
    ends_with_newline: bool
    def __init__(self, path: _Optional[str] = ..., content: _Optional[str] = ..., total_lines: _Optional[int] = ..., next_offset: _Optional[int] = ..., etag: _Optional[str] = ..., ends_with_newline: _Optional[bool] = ...) -> None: ...

class DownloadRequest(_message.Message):
    __slots__ = ("path", "offset", "limit")
    PATH_FIELD_NUMBER: _ClassVar[int]
    OFFSET_FIELD_NUMBER: _ClassVar[int]
    LIMIT_FIELD_NUMBER: _ClassVar[int]
    path: str
    offset: int
    limit: int
    def __init__(self, path: _Optional[str] = ..., offset: _Optional[int] = ..., limit: _Optional[int] = ...) -> None: ...

class DownloadResponse(_message.Message):
    __slots__ = ("info", "data")
    INFO_FIELD_NUMBER: _ClassVar[int]
    DATA_FIELD_NUMBER: _ClassVar[int]
    info: FileInfo
    data: bytes
    def __init__(self, info: _Optional[_Union[FileInfo, _Mapping]] = ..., data: _Optional[bytes] = ...) -> None: ...

class UploadRequest(_message.Message):
    __slots__ = ("header", "data")
    HEADER_FIELD_NUMBER: _ClassVar[int]
    DATA_FIELD_NUMBER: _ClassVar[int]
    header: UploadHeader
    data: bytes
    def __init__(self, header: _Optional[_Union[UploadHeader, _Mapping]] = ..., data: _Optional[bytes] = ...) -> None: ...

class UploadHeader(_message.Message):
    __slots__ = ("path", "if_match", "must_not_exist")
    PATH_FIELD_NUMBER: _ClassVar[int]
    IF_MATCH_FIELD_NUMBER: _ClassVar[int]
    MUST_NOT_EXIST_FIELD_NUMBER: _ClassVar[int]
    path: str
    if_match: str
    must_not_exist: bool
    def __init__(self, path: _Optional[str] = ..., if_match: _Optional[str] = ..., must_not_exist: _Optional[bool] = ...) -> None: ...

class UploadResponse(_message.Message):
    __slots__ = ("info",)
    INFO_FIELD_NUMBER: _ClassVar[int]
    info: FileInfo
    def __init__(self, info: _Optional[_Union[FileInfo, _Mapping]] = ...) -> None: ...

class WriteRequest(_message.Message):
    __slots__ = ("path", "content", "if_match", "must_not_exist")
    PATH_FIELD_NUMBER: _ClassVar[int]
    CONTENT_FIELD_NUMBER: _ClassVar[int]
    IF_MATCH_FIELD_NUMBER: _ClassVar[int]
    MUST_NOT_EXIST_FIELD_NUMBER: _ClassVar[int]
    path: str
    content: str
    if_match: str
    must_not_exist: bool
    def __init__(self, path: _Optional[str] = ..., content: _Optional[str] = ..., if_match: _Optional[str] = ..., must_not_exist: _Optional[bool] = ...) -> None: ...

class WriteResponse(_message.Message):
    __slots__ = ("info",)
    INFO_FIELD_NUMBER: _ClassVar[int]
    info: FileInfo
    def __init__(self, info: _Optional[_Union[FileInfo, _Mapping]] = ...) -> None: ...

class EditRequest(_message.Message):
    __slots__ = ("path", "old_string", "new_string", "replace_all")
    PATH_FIELD_NUMBER: _ClassVar[int]
    OLD_STRING_FIELD_NUMBER: _ClassVar[int]
    NEW_STRING_FIELD_NUMBER: _ClassVar[int]
    REPLACE_ALL_FIELD_NUMBER: _ClassVar[int]
    path: str
    old_string: str
    new_string: str
    replace_all: bool
    def __init__(self, path: _Optional[str] = ..., old_string: _Optional[str] = ..., new_string: _Optional[str] = ..., replace_all: _Optional[bool] = ...) -> None: ...

class EditResponse(_message.Message):
    __slots__ = ("occurrences", "info")
    OCCURRENCES_FIELD_NUMBER: _ClassVar[int]
    INFO_FIELD_NUMBER: _ClassVar[int]
    occurrences: int
    info: FileInfo
    def __init__(self, occurrences: _Optional[int] = ..., info: _Optional[_Union[FileInfo, _Mapping]] = ...) -> None: ...

class DeleteRequest(_message.Message):
    __slots__ = ("path", "recursive")
    PATH_FIELD_NUMBER: _ClassVar[int]
    RECURSIVE_FIELD_NUMBER: _ClassVar[int]
    path: str
    recursive: bool
    def __init__(self, path: _Optional[str] = ..., recursive: _Optional[bool] = ...) -> None: ...

class DeleteResponse(_message.Message):
    __slots__ = ("deleted",)
    DELETED_FIELD_NUMBER: _ClassVar[int]
    deleted: int
    def __init__(self, deleted: _Optional[int] = ...) -> None: ...

class GlobRequest(_message.Message):
    __slots__ = ("pattern", "path", "max_results", "hidden", "match_base_name")
    PATTERN_FIELD_NUMBER: _ClassVar[int]
    PATH_FIELD_NUMBER: _ClassVar[int]
    MAX_RESULTS_FIELD_NUMBER: _ClassVar[int]
    HIDDEN_FIELD_NUMBER: _ClassVar[int]
    MATCH_BASE_NAME_FIELD_NUMBER: _ClassVar[int]
    pattern: str
    path: str
    max_results: int
    hidden: GlobHidden
    match_base_name: bool
    def __init__(self, pattern: _Optional[str] = ..., path: _Optional[str] = ..., max_results: _Optional[int] = ..., hidden: _Optional[_Union[GlobHidden, str]] = ..., match_base_name: _Optional[bool] = ...) -> None: ...

class GlobResponse(_message.Message):
    __slots__ = ("matches", "truncated")
    MATCHES_FIELD_NUMBER: _ClassVar[int]
    TRUNCATED_FIELD_NUMBER: _ClassVar[int]
    matches: _containers.RepeatedCompositeFieldContainer[FileInfo]
    truncated: bool
    def __init__(self, matches: _Optional[_Iterable[_Union[FileInfo, _Mapping]]] = ..., truncated: _Optional[bool] = ...) -> None: ...

class GrepRequest(_message.Message):
    __slots__ = ("pattern", "path", "glob", "regex", "case_insensitive", "max_matches")
    PATTERN_FIELD_NUMBER: _ClassVar[int]
    PATH_FIELD_NUMBER: _ClassVar[int]
    GLOB_FIELD_NUMBER: _ClassVar[int]
    REGEX_FIELD_NUMBER: _ClassVar[int]
    CASE_INSENSITIVE_FIELD_NUMBER: _ClassVar[int]
    MAX_MATCHES_FIELD_NUMBER: _ClassVar[int]
    pattern: str
    path: str
    glob: str
    regex: bool
    case_insensitive: bool
    max_matches: int
    def __init__(self, pattern: _Optional[str] = ..., path: _Optional[str] = ..., glob: _Optional[str] = ..., regex: _Optional[bool] = ..., case_insensitive: _Optional[bool] = ..., max_matches: _Optional[int] = ...) -> None: ...

class GrepMatch(_message.Message):
    __slots__ = ("path", "line", "text")
    PATH_FIELD_NUMBER: _ClassVar[int]
    LINE_FIELD_NUMBER: _ClassVar[int]
    TEXT_FIELD_NUMBER: _ClassVar[int]
    path: str
    line: int
    text: str
    def __init__(self, path: _Optional[str] = ..., line: _Optional[int] = ..., text: _Optional[str] = ...) -> None: ...

class GrepResponse(_message.Message):
    __slots__ = ("matches", "truncated", "files_scanned", "files_skipped")
    MATCHES_FIELD_NUMBER: _ClassVar[int]
    TRUNCATED_FIELD_NUMBER: _ClassVar[int]
    FILES_SCANNED_FIELD_NUMBER: _ClassVar[int]
    FILES_SKIPPED_FIELD_NUMBER: _ClassVar[int]
    matches: _containers.RepeatedCompositeFieldContainer[GrepMatch]
    truncated: bool
    files_scanned: int
    files_skipped: int
    def __init__(self, matches: _Optional[_Iterable[_Union[GrepMatch, _Mapping]]] = ..., truncated: _Optional[bool] = ..., files_scanned: _Optional[int] = ..., files_skipped: _Optional[int] = ...) -> None: ...
