from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class Limits(_message.Message):
    __slots__ = ("workflow_execution_rate_limit", "usage")
    WORKFLOW_EXECUTION_RATE_LIMIT_FIELD_NUMBER: _ClassVar[int]
    USAGE_FIELD_NUMBER: _ClassVar[int]
    workflow_execution_rate_limit: ExecutionRateLimits
    usage: Usage
    def __init__(self, workflow_execution_rate_limit: _Optional[_Union[ExecutionRateLimits, _Mapping]] = ..., usage: _Optional[_Union[Usage, _Mapping]] = ...) -> None: ...

class ExecutionRateLimits(_message.Message):
    __slots__ = ("sync_executions", "async_executions")
    SYNC_EXECUTIONS_FIELD_NUMBER: _ClassVar[int]
    ASYNC_EXECUTIONS_FIELD_NUMBER: _ClassVar[int]
    sync_executions: RateLimitBucket
    async_executions: RateLimitBucket
    def __init__(self, sync_executions: _Optional[_Union[RateLimitBucket, _Mapping]] = ..., async_executions: _Optional[_Union[RateLimitBucket, _Mapping]] = ...) -> None: ...

class RateLimitBucket(_message.Message):
    __slots__ = ("requests_per_minute", "max_burst", "remaining", "reset_at")
    REQUESTS_PER_MINUTE_FIELD_NUMBER: _ClassVar[int]
    MAX_BURST_FIELD_NUMBER: _ClassVar[int]
    REMAINING_FIELD_NUMBER: _ClassVar[int]
    RESET_AT_FIELD_NUMBER: _ClassVar[int]
    requests_per_minute: int
    max_burst: int
    remaining: int
    reset_at: str
    def __init__(self, requests_per_minute: _Optional[int] = ..., max_burst: _Optional[int] = ..., remaining: _Optional[int] = ..., reset_at: _Optional[str] = ...) -> None: ...

class Usage(_message.Message):
    __slots__ = ("current_period_cost", "limit", "plan", "is_exceeded")
    CURRENT_PERIOD_COST_FIELD_NUMBER: _ClassVar[int]
    LIMIT_FIELD_NUMBER: _ClassVar[int]
    PLAN_FIELD_NUMBER: _ClassVar[int]
    IS_EXCEEDED_FIELD_NUMBER: _ClassVar[int]
    current_period_cost: float
    limit: float
    plan: str
    is_exceeded: bool
    def __init__(self, current_period_cost: _Optional[float] = ..., limit: _Optional[float] = ..., plan: _Optional[str] = ..., is_exceeded: _Optional[bool] = ...) -> None: ...
