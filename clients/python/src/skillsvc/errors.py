"""Exceptions for failed calls, keeping the gRPC status code.

skillsvc maps every failure to one gRPC code through one table
(docs/agents/grpc-and-json.md, "Errors"); each code has an exception class here, so callers catch
``NotFound`` or ``FailedPrecondition`` rather than inspect codes.
"""

from __future__ import annotations

from typing import Any

import grpc
from google.rpc import error_details_pb2, status_pb2


class SkillsvcError(Exception):
    """A call that failed, with its gRPC code and the server's message.

    ``retry_after`` is the delay in seconds the server asked for
    (google.rpc.RetryInfo, sent with RESOURCE_EXHAUSTED by per-user limits),
    or None.
    """

    code: grpc.StatusCode = grpc.StatusCode.UNKNOWN

    def __init__(
        self,
        message: str,
        *,
        code: grpc.StatusCode | None = None,
        retry_after: float | None = None,
        request_id: str | None = None,
    ) -> None:
        super().__init__(message)
        if code is not None:
            self.code = code
        self.message = message
        self.retry_after = retry_after
        self.request_id = request_id

    def __str__(self) -> str:
        return f"{self.code.name}: {self.message}"


class InvalidArgument(SkillsvcError):
    code = grpc.StatusCode.INVALID_ARGUMENT


class NotFound(SkillsvcError):
    code = grpc.StatusCode.NOT_FOUND


class AlreadyExists(SkillsvcError):
    code = grpc.StatusCode.ALREADY_EXISTS


class PermissionDenied(SkillsvcError):
    code = grpc.StatusCode.PERMISSION_DENIED


class Unauthenticated(SkillsvcError):
    code = grpc.StatusCode.UNAUTHENTICATED


class FailedPrecondition(SkillsvcError):
    code = grpc.StatusCode.FAILED_PRECONDITION


class OutOfRange(SkillsvcError):
    code = grpc.StatusCode.OUT_OF_RANGE


class ResourceExhausted(SkillsvcError):
    code = grpc.StatusCode.RESOURCE_EXHAUSTED


class Aborted(SkillsvcError):
    code = grpc.StatusCode.ABORTED


class Unavailable(SkillsvcError):
    code = grpc.StatusCode.UNAVAILABLE


class DeadlineExceeded(SkillsvcError):
    code = grpc.StatusCode.DEADLINE_EXCEEDED


class Cancelled(SkillsvcError):
    code = grpc.StatusCode.CANCELLED


class Internal(SkillsvcError):
    code = grpc.StatusCode.INTERNAL


_BY_CODE: dict[grpc.StatusCode, type[SkillsvcError]] = {
    cls.code: cls
    for cls in (
        InvalidArgument,
        NotFound,
        AlreadyExists,
        PermissionDenied,
        Unauthenticated,
        FailedPrecondition,
        OutOfRange,
        ResourceExhausted,
        Aborted,
        Unavailable,
        DeadlineExceeded,
        Cancelled,
        Internal,
    )
}


def from_rpc_error(err: grpc.RpcError | Any) -> SkillsvcError:
    """Turns a grpc (or grpc.aio) RpcError into the matching SkillsvcError."""
    code = err.code()
    message = err.details() or code.name
    retry_after = None
    request_id = None
    for key, value in err.trailing_metadata() or ():
        if key == "grpc-status-details-bin":
            retry_after = _retry_after(value)
        elif key == "x-request-id":
            request_id = value
    cls = _BY_CODE.get(code, SkillsvcError)
    return cls(message, code=code, retry_after=retry_after, request_id=request_id)


def _retry_after(details: bytes) -> float | None:
    st = status_pb2.Status.FromString(details)
    for any_ in st.details:
        info = error_details_pb2.RetryInfo()
        if any_.Unpack(info):
            return info.retry_delay.ToTimedelta().total_seconds()
    return None
