import datetime

from google.protobuf import timestamp_pb2 as _timestamp_pb2
from skillsvc.v1 import admin_pb2 as _admin_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class GetUsageRequest(_message.Message):
    __slots__ = ("library", "days", "to", "skill")
    LIBRARY_FIELD_NUMBER: _ClassVar[int]
    DAYS_FIELD_NUMBER: _ClassVar[int]
    FROM_FIELD_NUMBER: _ClassVar[int]
    TO_FIELD_NUMBER: _ClassVar[int]
    SKILL_FIELD_NUMBER: _ClassVar[int]
    library: _admin_pb2.LibraryRef
    days: int
    to: str
    skill: str
    def __init__(self, library: _Optional[_Union[_admin_pb2.LibraryRef, _Mapping]] = ..., days: _Optional[int] = ..., to: _Optional[str] = ..., skill: _Optional[str] = ..., **kwargs) -> None: ...

class GetUsageResponse(_message.Message):
    __slots__ = ("to", "skills", "days", "searches", "unused", "other_searches", "query_min_users")
    FROM_FIELD_NUMBER: _ClassVar[int]
    TO_FIELD_NUMBER: _ClassVar[int]
    SKILLS_FIELD_NUMBER: _ClassVar[int]
    DAYS_FIELD_NUMBER: _ClassVar[int]
    SEARCHES_FIELD_NUMBER: _ClassVar[int]
    UNUSED_FIELD_NUMBER: _ClassVar[int]
    OTHER_SEARCHES_FIELD_NUMBER: _ClassVar[int]
    QUERY_MIN_USERS_FIELD_NUMBER: _ClassVar[int]
    to: str
    skills: _containers.RepeatedCompositeFieldContainer[SkillUsage]
    days: _containers.RepeatedCompositeFieldContainer[DailyUsage]
    searches: _containers.RepeatedCompositeFieldContainer[SearchUsage]
    unused: _containers.RepeatedCompositeFieldContainer[UnusedSkill]
    other_searches: SearchUsage
    query_min_users: int
    def __init__(self, to: _Optional[str] = ..., skills: _Optional[_Iterable[_Union[SkillUsage, _Mapping]]] = ..., days: _Optional[_Iterable[_Union[DailyUsage, _Mapping]]] = ..., searches: _Optional[_Iterable[_Union[SearchUsage, _Mapping]]] = ..., unused: _Optional[_Iterable[_Union[UnusedSkill, _Mapping]]] = ..., other_searches: _Optional[_Union[SearchUsage, _Mapping]] = ..., query_min_users: _Optional[int] = ..., **kwargs) -> None: ...

class SkillUsage(_message.Message):
    __slots__ = ("name", "layer", "activations", "file_reads", "users", "threads", "surfaces", "versions", "first_day", "last_day")
    class SurfacesEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: int
        def __init__(self, key: _Optional[str] = ..., value: _Optional[int] = ...) -> None: ...
    NAME_FIELD_NUMBER: _ClassVar[int]
    LAYER_FIELD_NUMBER: _ClassVar[int]
    ACTIVATIONS_FIELD_NUMBER: _ClassVar[int]
    FILE_READS_FIELD_NUMBER: _ClassVar[int]
    USERS_FIELD_NUMBER: _ClassVar[int]
    THREADS_FIELD_NUMBER: _ClassVar[int]
    SURFACES_FIELD_NUMBER: _ClassVar[int]
    VERSIONS_FIELD_NUMBER: _ClassVar[int]
    FIRST_DAY_FIELD_NUMBER: _ClassVar[int]
    LAST_DAY_FIELD_NUMBER: _ClassVar[int]
    name: str
    layer: str
    activations: int
    file_reads: int
    users: int
    threads: int
    surfaces: _containers.ScalarMap[str, int]
    versions: _containers.RepeatedCompositeFieldContainer[VersionUsage]
    first_day: str
    last_day: str
    def __init__(self, name: _Optional[str] = ..., layer: _Optional[str] = ..., activations: _Optional[int] = ..., file_reads: _Optional[int] = ..., users: _Optional[int] = ..., threads: _Optional[int] = ..., surfaces: _Optional[_Mapping[str, int]] = ..., versions: _Optional[_Iterable[_Union[VersionUsage, _Mapping]]] = ..., first_day: _Optional[str] = ..., last_day: _Optional[str] = ...) -> None: ...

class VersionUsage(_message.Message):
    __slots__ = ("version", "activations", "file_reads")
    VERSION_FIELD_NUMBER: _ClassVar[int]
    ACTIVATIONS_FIELD_NUMBER: _ClassVar[int]
    FILE_READS_FIELD_NUMBER: _ClassVar[int]
    version: str
    activations: int
    file_reads: int
    def __init__(self, version: _Optional[str] = ..., activations: _Optional[int] = ..., file_reads: _Optional[int] = ...) -> None: ...

class DailyUsage(_message.Message):
    __slots__ = ("day", "activations", "file_reads", "searches", "users", "threads")
    DAY_FIELD_NUMBER: _ClassVar[int]
    ACTIVATIONS_FIELD_NUMBER: _ClassVar[int]
    FILE_READS_FIELD_NUMBER: _ClassVar[int]
    SEARCHES_FIELD_NUMBER: _ClassVar[int]
    USERS_FIELD_NUMBER: _ClassVar[int]
    THREADS_FIELD_NUMBER: _ClassVar[int]
    day: str
    activations: int
    file_reads: int
    searches: int
    users: int
    threads: int
    def __init__(self, day: _Optional[str] = ..., activations: _Optional[int] = ..., file_reads: _Optional[int] = ..., searches: _Optional[int] = ..., users: _Optional[int] = ..., threads: _Optional[int] = ...) -> None: ...

class SearchUsage(_message.Message):
    __slots__ = ("query", "searches", "empty", "led")
    QUERY_FIELD_NUMBER: _ClassVar[int]
    SEARCHES_FIELD_NUMBER: _ClassVar[int]
    EMPTY_FIELD_NUMBER: _ClassVar[int]
    LED_FIELD_NUMBER: _ClassVar[int]
    query: str
    searches: int
    empty: int
    led: int
    def __init__(self, query: _Optional[str] = ..., searches: _Optional[int] = ..., empty: _Optional[int] = ..., led: _Optional[int] = ...) -> None: ...

class UnusedSkill(_message.Message):
    __slots__ = ("name", "dir", "last_used_day", "added", "age_days")
    NAME_FIELD_NUMBER: _ClassVar[int]
    DIR_FIELD_NUMBER: _ClassVar[int]
    LAST_USED_DAY_FIELD_NUMBER: _ClassVar[int]
    ADDED_FIELD_NUMBER: _ClassVar[int]
    AGE_DAYS_FIELD_NUMBER: _ClassVar[int]
    name: str
    dir: str
    last_used_day: str
    added: _timestamp_pb2.Timestamp
    age_days: int
    def __init__(self, name: _Optional[str] = ..., dir: _Optional[str] = ..., last_used_day: _Optional[str] = ..., added: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., age_days: _Optional[int] = ...) -> None: ...
