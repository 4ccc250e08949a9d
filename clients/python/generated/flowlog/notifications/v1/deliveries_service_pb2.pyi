from google.api import annotations_pb2 as _annotations_pb2
from google.api import field_behavior_pb2 as _field_behavior_pb2
from google.protobuf import struct_pb2 as _struct_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class Delivery(_message.Message):
    __slots__ = ("id", "workspace_id", "subscription_id", "event_id", "event_type", "log_id", "status", "attempt_count", "last_error", "created_at", "updated_at", "last_http_status")
    ID_FIELD_NUMBER: _ClassVar[int]
    WORKSPACE_ID_FIELD_NUMBER: _ClassVar[int]
    SUBSCRIPTION_ID_FIELD_NUMBER: _ClassVar[int]
    EVENT_ID_FIELD_NUMBER: _ClassVar[int]
    EVENT_TYPE_FIELD_NUMBER: _ClassVar[int]
    LOG_ID_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    ATTEMPT_COUNT_FIELD_NUMBER: _ClassVar[int]
    LAST_ERROR_FIELD_NUMBER: _ClassVar[int]
    CREATED_AT_FIELD_NUMBER: _ClassVar[int]
    UPDATED_AT_FIELD_NUMBER: _ClassVar[int]
    LAST_HTTP_STATUS_FIELD_NUMBER: _ClassVar[int]
    id: str
    workspace_id: str
    subscription_id: str
    event_id: str
    event_type: str
    log_id: str
    status: str
    attempt_count: int
    last_error: str
    created_at: str
    updated_at: str
    last_http_status: int
    def __init__(self, id: _Optional[str] = ..., workspace_id: _Optional[str] = ..., subscription_id: _Optional[str] = ..., event_id: _Optional[str] = ..., event_type: _Optional[str] = ..., log_id: _Optional[str] = ..., status: _Optional[str] = ..., attempt_count: _Optional[int] = ..., last_error: _Optional[str] = ..., created_at: _Optional[str] = ..., updated_at: _Optional[str] = ..., last_http_status: _Optional[int] = ...) -> None: ...

class DeliveryAttempt(_message.Message):
    __slots__ = ("series", "attempt", "started_at", "duration_ms", "outcome", "http_status", "response_snippet", "error")
    SERIES_FIELD_NUMBER: _ClassVar[int]
    ATTEMPT_FIELD_NUMBER: _ClassVar[int]
    STARTED_AT_FIELD_NUMBER: _ClassVar[int]
    DURATION_MS_FIELD_NUMBER: _ClassVar[int]
    OUTCOME_FIELD_NUMBER: _ClassVar[int]
    HTTP_STATUS_FIELD_NUMBER: _ClassVar[int]
    RESPONSE_SNIPPET_FIELD_NUMBER: _ClassVar[int]
    ERROR_FIELD_NUMBER: _ClassVar[int]
    series: int
    attempt: int
    started_at: str
    duration_ms: int
    outcome: str
    http_status: int
    response_snippet: str
    error: str
    def __init__(self, series: _Optional[int] = ..., attempt: _Optional[int] = ..., started_at: _Optional[str] = ..., duration_ms: _Optional[int] = ..., outcome: _Optional[str] = ..., http_status: _Optional[int] = ..., response_snippet: _Optional[str] = ..., error: _Optional[str] = ...) -> None: ...

class ListDeliveriesRequest(_message.Message):
    __slots__ = ("workspace_id", "subscription_id", "status", "event_id", "limit", "event_type", "start_date", "end_date", "http_status_class", "cursor")
    WORKSPACE_ID_FIELD_NUMBER: _ClassVar[int]
    SUBSCRIPTION_ID_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    EVENT_ID_FIELD_NUMBER: _ClassVar[int]
    LIMIT_FIELD_NUMBER: _ClassVar[int]
    EVENT_TYPE_FIELD_NUMBER: _ClassVar[int]
    START_DATE_FIELD_NUMBER: _ClassVar[int]
    END_DATE_FIELD_NUMBER: _ClassVar[int]
    HTTP_STATUS_CLASS_FIELD_NUMBER: _ClassVar[int]
    CURSOR_FIELD_NUMBER: _ClassVar[int]
    workspace_id: str
    subscription_id: str
    status: str
    event_id: str
    limit: int
    event_type: str
    start_date: str
    end_date: str
    http_status_class: str
    cursor: str
    def __init__(self, workspace_id: _Optional[str] = ..., subscription_id: _Optional[str] = ..., status: _Optional[str] = ..., event_id: _Optional[str] = ..., limit: _Optional[int] = ..., event_type: _Optional[str] = ..., start_date: _Optional[str] = ..., end_date: _Optional[str] = ..., http_status_class: _Optional[str] = ..., cursor: _Optional[str] = ...) -> None: ...

class ListDeliveriesResponse(_message.Message):
    __slots__ = ("deliveries", "next_cursor")
    DELIVERIES_FIELD_NUMBER: _ClassVar[int]
    NEXT_CURSOR_FIELD_NUMBER: _ClassVar[int]
    deliveries: _containers.RepeatedCompositeFieldContainer[Delivery]
    next_cursor: str
    def __init__(self, deliveries: _Optional[_Iterable[_Union[Delivery, _Mapping]]] = ..., next_cursor: _Optional[str] = ...) -> None: ...

class GetDeliveryRequest(_message.Message):
    __slots__ = ("id", "attempts_limit", "attempts_cursor")
    ID_FIELD_NUMBER: _ClassVar[int]
    ATTEMPTS_LIMIT_FIELD_NUMBER: _ClassVar[int]
    ATTEMPTS_CURSOR_FIELD_NUMBER: _ClassVar[int]
    id: str
    attempts_limit: int
    attempts_cursor: str
    def __init__(self, id: _Optional[str] = ..., attempts_limit: _Optional[int] = ..., attempts_cursor: _Optional[str] = ...) -> None: ...

class GetDeliveryResponse(_message.Message):
    __slots__ = ("delivery", "event", "attempts", "next_attempts_cursor")
    DELIVERY_FIELD_NUMBER: _ClassVar[int]
    EVENT_FIELD_NUMBER: _ClassVar[int]
    ATTEMPTS_FIELD_NUMBER: _ClassVar[int]
    NEXT_ATTEMPTS_CURSOR_FIELD_NUMBER: _ClassVar[int]
    delivery: Delivery
    event: _struct_pb2.Value
    attempts: _containers.RepeatedCompositeFieldContainer[DeliveryAttempt]
    next_attempts_cursor: str
    def __init__(self, delivery: _Optional[_Union[Delivery, _Mapping]] = ..., event: _Optional[_Union[_struct_pb2.Value, _Mapping]] = ..., attempts: _Optional[_Iterable[_Union[DeliveryAttempt, _Mapping]]] = ..., next_attempts_cursor: _Optional[str] = ...) -> None: ...

class RedeliverRequest(_message.Message):
    __slots__ = ("id",)
    ID_FIELD_NUMBER: _ClassVar[int]
    id: str
    def __init__(self, id: _Optional[str] = ...) -> None: ...

class RedeliverResponse(_message.Message):
    __slots__ = ("delivery", "series")
    DELIVERY_FIELD_NUMBER: _ClassVar[int]
    SERIES_FIELD_NUMBER: _ClassVar[int]
    delivery: Delivery
    series: int
    def __init__(self, delivery: _Optional[_Union[Delivery, _Mapping]] = ..., series: _Optional[int] = ...) -> None: ...

class TestSubscriptionRequest(_message.Message):
    __slots__ = ("workspace_id", "id")
    WORKSPACE_ID_FIELD_NUMBER: _ClassVar[int]
    ID_FIELD_NUMBER: _ClassVar[int]
    workspace_id: str
    id: str
    def __init__(self, workspace_id: _Optional[str] = ..., id: _Optional[str] = ...) -> None: ...

class TestSubscriptionResponse(_message.Message):
    __slots__ = ("delivery_id", "attempt")
    DELIVERY_ID_FIELD_NUMBER: _ClassVar[int]
    ATTEMPT_FIELD_NUMBER: _ClassVar[int]
    delivery_id: str
    attempt: DeliveryAttempt
    def __init__(self, delivery_id: _Optional[str] = ..., attempt: _Optional[_Union[DeliveryAttempt, _Mapping]] = ...) -> None: ...

class Recovery(_message.Message):
    __slots__ = ("id", "subscription_id", "since", "until", "status", "total", "done", "succeeded", "failed", "skipped", "capped", "started_at", "ended_at", "stopped_reason")
    ID_FIELD_NUMBER: _ClassVar[int]
    SUBSCRIPTION_ID_FIELD_NUMBER: _ClassVar[int]
    SINCE_FIELD_NUMBER: _ClassVar[int]
    UNTIL_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    TOTAL_FIELD_NUMBER: _ClassVar[int]
    DONE_FIELD_NUMBER: _ClassVar[int]
    SUCCEEDED_FIELD_NUMBER: _ClassVar[int]
    FAILED_FIELD_NUMBER: _ClassVar[int]
    SKIPPED_FIELD_NUMBER: _ClassVar[int]
    CAPPED_FIELD_NUMBER: _ClassVar[int]
    STARTED_AT_FIELD_NUMBER: _ClassVar[int]
    ENDED_AT_FIELD_NUMBER: _ClassVar[int]
    STOPPED_REASON_FIELD_NUMBER: _ClassVar[int]
    id: str
    subscription_id: str
    since: str
    until: str
    status: str
    total: int
    done: int
    succeeded: int
    failed: int
    skipped: int
    capped: bool
    started_at: str
    ended_at: str
    stopped_reason: str
    def __init__(self, id: _Optional[str] = ..., subscription_id: _Optional[str] = ..., since: _Optional[str] = ..., until: _Optional[str] = ..., status: _Optional[str] = ..., total: _Optional[int] = ..., done: _Optional[int] = ..., succeeded: _Optional[int] = ..., failed: _Optional[int] = ..., skipped: _Optional[int] = ..., capped: _Optional[bool] = ..., started_at: _Optional[str] = ..., ended_at: _Optional[str] = ..., stopped_reason: _Optional[str] = ...) -> None: ...

class RecoverDeliveriesRequest(_message.Message):
    __slots__ = ("workspace_id", "id", "since", "until", "preview")
    WORKSPACE_ID_FIELD_NUMBER: _ClassVar[int]
    ID_FIELD_NUMBER: _ClassVar[int]
    SINCE_FIELD_NUMBER: _ClassVar[int]
    UNTIL_FIELD_NUMBER: _ClassVar[int]
    PREVIEW_FIELD_NUMBER: _ClassVar[int]
    workspace_id: str
    id: str
    since: str
    until: str
    preview: bool
    def __init__(self, workspace_id: _Optional[str] = ..., id: _Optional[str] = ..., since: _Optional[str] = ..., until: _Optional[str] = ..., preview: _Optional[bool] = ...) -> None: ...

class RecoverDeliveriesResponse(_message.Message):
    __slots__ = ("failed", "beyond_limit", "recovery")
    FAILED_FIELD_NUMBER: _ClassVar[int]
    BEYOND_LIMIT_FIELD_NUMBER: _ClassVar[int]
    RECOVERY_FIELD_NUMBER: _ClassVar[int]
    failed: int
    beyond_limit: bool
    recovery: Recovery
    def __init__(self, failed: _Optional[int] = ..., beyond_limit: _Optional[bool] = ..., recovery: _Optional[_Union[Recovery, _Mapping]] = ...) -> None: ...

class GetRecoveryRequest(_message.Message):
    __slots__ = ("workspace_id", "id")
    WORKSPACE_ID_FIELD_NUMBER: _ClassVar[int]
    ID_FIELD_NUMBER: _ClassVar[int]
    workspace_id: str
    id: str
    def __init__(self, workspace_id: _Optional[str] = ..., id: _Optional[str] = ...) -> None: ...

class GetRecoveryResponse(_message.Message):
    __slots__ = ("recovery",)
    RECOVERY_FIELD_NUMBER: _ClassVar[int]
    recovery: Recovery
    def __init__(self, recovery: _Optional[_Union[Recovery, _Mapping]] = ...) -> None: ...

class CancelRecoveryRequest(_message.Message):
    __slots__ = ("workspace_id", "id")
    WORKSPACE_ID_FIELD_NUMBER: _ClassVar[int]
    ID_FIELD_NUMBER: _ClassVar[int]
    workspace_id: str
    id: str
    def __init__(self, workspace_id: _Optional[str] = ..., id: _Optional[str] = ...) -> None: ...

class CancelRecoveryResponse(_message.Message):
    __slots__ = ("recovery",)
    RECOVERY_FIELD_NUMBER: _ClassVar[int]
    recovery: Recovery
    def __init__(self, recovery: _Optional[_Union[Recovery, _Mapping]] = ...) -> None: ...
