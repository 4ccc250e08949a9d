from flowlog.logs.v1 import limits_pb2 as _limits_pb2
from flowlog.logs.v1 import log_entry_pb2 as _log_entry_pb2
from flowlog.workflows.v1 import workflow_pb2 as _workflow_pb2
from google.api import annotations_pb2 as _annotations_pb2
from google.api import field_behavior_pb2 as _field_behavior_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class ListLogsRequest(_message.Message):
    __slots__ = ("workspace_id", "workflow_ids", "folder_ids", "triggers", "level", "start_date", "end_date", "execution_id", "min_duration_ms", "max_duration_ms", "min_cost", "max_cost", "model", "limit", "cursor", "order", "details", "include_trace_spans", "include_final_output", "q")
    WORKSPACE_ID_FIELD_NUMBER: _ClassVar[int]
    WORKFLOW_IDS_FIELD_NUMBER: _ClassVar[int]
    FOLDER_IDS_FIELD_NUMBER: _ClassVar[int]
    TRIGGERS_FIELD_NUMBER: _ClassVar[int]
    LEVEL_FIELD_NUMBER: _ClassVar[int]
    START_DATE_FIELD_NUMBER: _ClassVar[int]
    END_DATE_FIELD_NUMBER: _ClassVar[int]
    EXECUTION_ID_FIELD_NUMBER: _ClassVar[int]
    MIN_DURATION_MS_FIELD_NUMBER: _ClassVar[int]
    MAX_DURATION_MS_FIELD_NUMBER: _ClassVar[int]
    MIN_COST_FIELD_NUMBER: _ClassVar[int]
    MAX_COST_FIELD_NUMBER: _ClassVar[int]
    MODEL_FIELD_NUMBER: _ClassVar[int]
    LIMIT_FIELD_NUMBER: _ClassVar[int]
    CURSOR_FIELD_NUMBER: _ClassVar[int]
    ORDER_FIELD_NUMBER: _ClassVar[int]
    DETAILS_FIELD_NUMBER: _ClassVar[int]
    INCLUDE_TRACE_SPANS_FIELD_NUMBER: _ClassVar[int]
    INCLUDE_FINAL_OUTPUT_FIELD_NUMBER: _ClassVar[int]
    Q_FIELD_NUMBER: _ClassVar[int]
    workspace_id: str
    workflow_ids: _containers.RepeatedScalarFieldContainer[str]
    folder_ids: _containers.RepeatedScalarFieldContainer[str]
    triggers: _containers.RepeatedScalarFieldContainer[str]
    level: str
    start_date: str
    end_date: str
    execution_id: str
    min_duration_ms: int
    max_duration_ms: int
    min_cost: float
    max_cost: float
    model: str
    limit: int
    cursor: str
    order: str
    details: str
    include_trace_spans: bool
    include_final_output: bool
    q: str
    def __init__(self, workspace_id: _Optional[str] = ..., workflow_ids: _Optional[_Iterable[str]] = ..., folder_ids: _Optional[_Iterable[str]] = ..., triggers: _Optional[_Iterable[str]] = ..., level: _Optional[str] = ..., start_date: _Optional[str] = ..., end_date: _Optional[str] = ..., execution_id: _Optional[str] = ..., min_duration_ms: _Optional[int] = ..., max_duration_ms: _Optional[int] = ..., min_cost: _Optional[float] = ..., max_cost: _Optional[float] = ..., model: _Optional[str] = ..., limit: _Optional[int] = ..., cursor: _Optional[str] = ..., order: _Optional[str] = ..., details: _Optional[str] = ..., include_trace_spans: _Optional[bool] = ..., include_final_output: _Optional[bool] = ..., q: _Optional[str] = ...) -> None: ...

class ListLogsResponse(_message.Message):
    __slots__ = ("data", "next_cursor", "limits")
    DATA_FIELD_NUMBER: _ClassVar[int]
    NEXT_CURSOR_FIELD_NUMBER: _ClassVar[int]
    LIMITS_FIELD_NUMBER: _ClassVar[int]
    data: _containers.RepeatedCompositeFieldContainer[_log_entry_pb2.LogEntry]
    next_cursor: str
    limits: _limits_pb2.Limits
    def __init__(self, data: _Optional[_Iterable[_Union[_log_entry_pb2.LogEntry, _Mapping]]] = ..., next_cursor: _Optional[str] = ..., limits: _Optional[_Union[_limits_pb2.Limits, _Mapping]] = ...) -> None: ...

class GetLogRequest(_message.Message):
    __slots__ = ("id",)
    ID_FIELD_NUMBER: _ClassVar[int]
    id: str
    def __init__(self, id: _Optional[str] = ...) -> None: ...

class GetLogResponse(_message.Message):
    __slots__ = ("data", "limits")
    DATA_FIELD_NUMBER: _ClassVar[int]
    LIMITS_FIELD_NUMBER: _ClassVar[int]
    data: _log_entry_pb2.LogEntry
    limits: _limits_pb2.Limits
    def __init__(self, data: _Optional[_Union[_log_entry_pb2.LogEntry, _Mapping]] = ..., limits: _Optional[_Union[_limits_pb2.Limits, _Mapping]] = ...) -> None: ...

class GetExecutionRequest(_message.Message):
    __slots__ = ("execution_id",)
    EXECUTION_ID_FIELD_NUMBER: _ClassVar[int]
    execution_id: str
    def __init__(self, execution_id: _Optional[str] = ...) -> None: ...

class GetExecutionResponse(_message.Message):
    __slots__ = ("execution_id", "workflow_id", "workflow_state", "execution_metadata", "limits")
    EXECUTION_ID_FIELD_NUMBER: _ClassVar[int]
    WORKFLOW_ID_FIELD_NUMBER: _ClassVar[int]
    WORKFLOW_STATE_FIELD_NUMBER: _ClassVar[int]
    EXECUTION_METADATA_FIELD_NUMBER: _ClassVar[int]
    LIMITS_FIELD_NUMBER: _ClassVar[int]
    execution_id: str
    workflow_id: str
    workflow_state: _workflow_pb2.WorkflowState
    execution_metadata: ExecutionMetadata
    limits: _limits_pb2.Limits
    def __init__(self, execution_id: _Optional[str] = ..., workflow_id: _Optional[str] = ..., workflow_state: _Optional[_Union[_workflow_pb2.WorkflowState, _Mapping]] = ..., execution_metadata: _Optional[_Union[ExecutionMetadata, _Mapping]] = ..., limits: _Optional[_Union[_limits_pb2.Limits, _Mapping]] = ...) -> None: ...

class ExecutionMetadata(_message.Message):
    __slots__ = ("trigger", "started_at", "ended_at", "total_duration_ms", "cost", "retry_of", "retried_by", "workflow_version")
    TRIGGER_FIELD_NUMBER: _ClassVar[int]
    STARTED_AT_FIELD_NUMBER: _ClassVar[int]
    ENDED_AT_FIELD_NUMBER: _ClassVar[int]
    TOTAL_DURATION_MS_FIELD_NUMBER: _ClassVar[int]
    COST_FIELD_NUMBER: _ClassVar[int]
    RETRY_OF_FIELD_NUMBER: _ClassVar[int]
    RETRIED_BY_FIELD_NUMBER: _ClassVar[int]
    WORKFLOW_VERSION_FIELD_NUMBER: _ClassVar[int]
    trigger: str
    started_at: str
    ended_at: str
    total_duration_ms: int
    cost: _log_entry_pb2.Cost
    retry_of: str
    retried_by: str
    workflow_version: int
    def __init__(self, trigger: _Optional[str] = ..., started_at: _Optional[str] = ..., ended_at: _Optional[str] = ..., total_duration_ms: _Optional[int] = ..., cost: _Optional[_Union[_log_entry_pb2.Cost, _Mapping]] = ..., retry_of: _Optional[str] = ..., retried_by: _Optional[str] = ..., workflow_version: _Optional[int] = ...) -> None: ...

class GetLogStatsRequest(_message.Message):
    __slots__ = ("workspace_id", "workflow_ids", "folder_ids", "triggers", "level", "start_date", "end_date", "min_duration_ms", "max_duration_ms", "min_cost", "max_cost", "model", "q")
    WORKSPACE_ID_FIELD_NUMBER: _ClassVar[int]
    WORKFLOW_IDS_FIELD_NUMBER: _ClassVar[int]
    FOLDER_IDS_FIELD_NUMBER: _ClassVar[int]
    TRIGGERS_FIELD_NUMBER: _ClassVar[int]
    LEVEL_FIELD_NUMBER: _ClassVar[int]
    START_DATE_FIELD_NUMBER: _ClassVar[int]
    END_DATE_FIELD_NUMBER: _ClassVar[int]
    MIN_DURATION_MS_FIELD_NUMBER: _ClassVar[int]
    MAX_DURATION_MS_FIELD_NUMBER: _ClassVar[int]
    MIN_COST_FIELD_NUMBER: _ClassVar[int]
    MAX_COST_FIELD_NUMBER: _ClassVar[int]
    MODEL_FIELD_NUMBER: _ClassVar[int]
    Q_FIELD_NUMBER: _ClassVar[int]
    workspace_id: str
    workflow_ids: _containers.RepeatedScalarFieldContainer[str]
    folder_ids: _containers.RepeatedScalarFieldContainer[str]
    triggers: _containers.RepeatedScalarFieldContainer[str]
    level: str
    start_date: str
    end_date: str
    min_duration_ms: int
    max_duration_ms: int
    min_cost: float
    max_cost: float
    model: str
    q: str
    def __init__(self, workspace_id: _Optional[str] = ..., workflow_ids: _Optional[_Iterable[str]] = ..., folder_ids: _Optional[_Iterable[str]] = ..., triggers: _Optional[_Iterable[str]] = ..., level: _Optional[str] = ..., start_date: _Optional[str] = ..., end_date: _Optional[str] = ..., min_duration_ms: _Optional[int] = ..., max_duration_ms: _Optional[int] = ..., min_cost: _Optional[float] = ..., max_cost: _Optional[float] = ..., model: _Optional[str] = ..., q: _Optional[str] = ...) -> None: ...

class GetLogStatsResponse(_message.Message):
    __slots__ = ("hours", "model_costs", "start", "end", "limits")
    HOURS_FIELD_NUMBER: _ClassVar[int]
    MODEL_COSTS_FIELD_NUMBER: _ClassVar[int]
    START_FIELD_NUMBER: _ClassVar[int]
    END_FIELD_NUMBER: _ClassVar[int]
    LIMITS_FIELD_NUMBER: _ClassVar[int]
    hours: _containers.RepeatedCompositeFieldContainer[HourStats]
    model_costs: _containers.RepeatedCompositeFieldContainer[DayModelCost]
    start: str
    end: str
    limits: _limits_pb2.Limits
    def __init__(self, hours: _Optional[_Iterable[_Union[HourStats, _Mapping]]] = ..., model_costs: _Optional[_Iterable[_Union[DayModelCost, _Mapping]]] = ..., start: _Optional[str] = ..., end: _Optional[str] = ..., limits: _Optional[_Union[_limits_pb2.Limits, _Mapping]] = ...) -> None: ...

class HourStats(_message.Message):
    __slots__ = ("hour", "executions", "errors", "p50_duration_ms", "p95_duration_ms")
    HOUR_FIELD_NUMBER: _ClassVar[int]
    EXECUTIONS_FIELD_NUMBER: _ClassVar[int]
    ERRORS_FIELD_NUMBER: _ClassVar[int]
    P50_DURATION_MS_FIELD_NUMBER: _ClassVar[int]
    P95_DURATION_MS_FIELD_NUMBER: _ClassVar[int]
    hour: str
    executions: int
    errors: int
    p50_duration_ms: int
    p95_duration_ms: int
    def __init__(self, hour: _Optional[str] = ..., executions: _Optional[int] = ..., errors: _Optional[int] = ..., p50_duration_ms: _Optional[int] = ..., p95_duration_ms: _Optional[int] = ...) -> None: ...

class DayModelCost(_message.Message):
    __slots__ = ("day", "model", "cost", "tokens")
    DAY_FIELD_NUMBER: _ClassVar[int]
    MODEL_FIELD_NUMBER: _ClassVar[int]
    COST_FIELD_NUMBER: _ClassVar[int]
    TOKENS_FIELD_NUMBER: _ClassVar[int]
    day: str
    model: str
    cost: float
    tokens: float
    def __init__(self, day: _Optional[str] = ..., model: _Optional[str] = ..., cost: _Optional[float] = ..., tokens: _Optional[float] = ...) -> None: ...

class DeleteLogsRequest(_message.Message):
    __slots__ = ("workspace_id", "execution_ids", "workflow_ids", "folder_ids", "triggers", "level", "start_date", "end_date", "min_duration_ms", "max_duration_ms", "min_cost", "max_cost", "model", "preview", "q")
    WORKSPACE_ID_FIELD_NUMBER: _ClassVar[int]
    EXECUTION_IDS_FIELD_NUMBER: _ClassVar[int]
    WORKFLOW_IDS_FIELD_NUMBER: _ClassVar[int]
    FOLDER_IDS_FIELD_NUMBER: _ClassVar[int]
    TRIGGERS_FIELD_NUMBER: _ClassVar[int]
    LEVEL_FIELD_NUMBER: _ClassVar[int]
    START_DATE_FIELD_NUMBER: _ClassVar[int]
    END_DATE_FIELD_NUMBER: _ClassVar[int]
    MIN_DURATION_MS_FIELD_NUMBER: _ClassVar[int]
    MAX_DURATION_MS_FIELD_NUMBER: _ClassVar[int]
    MIN_COST_FIELD_NUMBER: _ClassVar[int]
    MAX_COST_FIELD_NUMBER: _ClassVar[int]
    MODEL_FIELD_NUMBER: _ClassVar[int]
    PREVIEW_FIELD_NUMBER: _ClassVar[int]
    Q_FIELD_NUMBER: _ClassVar[int]
    workspace_id: str
    execution_ids: _containers.RepeatedScalarFieldContainer[str]
    workflow_ids: _containers.RepeatedScalarFieldContainer[str]
    folder_ids: _containers.RepeatedScalarFieldContainer[str]
    triggers: _containers.RepeatedScalarFieldContainer[str]
    level: str
    start_date: str
    end_date: str
    min_duration_ms: int
    max_duration_ms: int
    min_cost: float
    max_cost: float
    model: str
    preview: bool
    q: str
    def __init__(self, workspace_id: _Optional[str] = ..., execution_ids: _Optional[_Iterable[str]] = ..., workflow_ids: _Optional[_Iterable[str]] = ..., folder_ids: _Optional[_Iterable[str]] = ..., triggers: _Optional[_Iterable[str]] = ..., level: _Optional[str] = ..., start_date: _Optional[str] = ..., end_date: _Optional[str] = ..., min_duration_ms: _Optional[int] = ..., max_duration_ms: _Optional[int] = ..., min_cost: _Optional[float] = ..., max_cost: _Optional[float] = ..., model: _Optional[str] = ..., preview: _Optional[bool] = ..., q: _Optional[str] = ...) -> None: ...

class DeleteLogsResponse(_message.Message):
    __slots__ = ("entries", "snapshots", "deliveries", "delivery_attempts", "remaining", "limits")
    ENTRIES_FIELD_NUMBER: _ClassVar[int]
    SNAPSHOTS_FIELD_NUMBER: _ClassVar[int]
    DELIVERIES_FIELD_NUMBER: _ClassVar[int]
    DELIVERY_ATTEMPTS_FIELD_NUMBER: _ClassVar[int]
    REMAINING_FIELD_NUMBER: _ClassVar[int]
    LIMITS_FIELD_NUMBER: _ClassVar[int]
    entries: int
    snapshots: int
    deliveries: int
    delivery_attempts: int
    remaining: int
    limits: _limits_pb2.Limits
    def __init__(self, entries: _Optional[int] = ..., snapshots: _Optional[int] = ..., deliveries: _Optional[int] = ..., delivery_attempts: _Optional[int] = ..., remaining: _Optional[int] = ..., limits: _Optional[_Union[_limits_pb2.Limits, _Mapping]] = ...) -> None: ...

class LogRetention(_message.Message):
    __slots__ = ("retention_days", "plan", "plan_retention_days", "workspace_retention_days")
    RETENTION_DAYS_FIELD_NUMBER: _ClassVar[int]
    PLAN_FIELD_NUMBER: _ClassVar[int]
    PLAN_RETENTION_DAYS_FIELD_NUMBER: _ClassVar[int]
    WORKSPACE_RETENTION_DAYS_FIELD_NUMBER: _ClassVar[int]
    retention_days: int
    plan: str
    plan_retention_days: int
    workspace_retention_days: int
    def __init__(self, retention_days: _Optional[int] = ..., plan: _Optional[str] = ..., plan_retention_days: _Optional[int] = ..., workspace_retention_days: _Optional[int] = ...) -> None: ...

class GetLogRetentionRequest(_message.Message):
    __slots__ = ("workspace_id",)
    WORKSPACE_ID_FIELD_NUMBER: _ClassVar[int]
    workspace_id: str
    def __init__(self, workspace_id: _Optional[str] = ...) -> None: ...

class GetLogRetentionResponse(_message.Message):
    __slots__ = ("retention", "limits")
    RETENTION_FIELD_NUMBER: _ClassVar[int]
    LIMITS_FIELD_NUMBER: _ClassVar[int]
    retention: LogRetention
    limits: _limits_pb2.Limits
    def __init__(self, retention: _Optional[_Union[LogRetention, _Mapping]] = ..., limits: _Optional[_Union[_limits_pb2.Limits, _Mapping]] = ...) -> None: ...

class UpdateLogRetentionRequest(_message.Message):
    __slots__ = ("workspace_id", "retention_days")
    WORKSPACE_ID_FIELD_NUMBER: _ClassVar[int]
    RETENTION_DAYS_FIELD_NUMBER: _ClassVar[int]
    workspace_id: str
    retention_days: int
    def __init__(self, workspace_id: _Optional[str] = ..., retention_days: _Optional[int] = ...) -> None: ...

class UpdateLogRetentionResponse(_message.Message):
    __slots__ = ("retention", "limits")
    RETENTION_FIELD_NUMBER: _ClassVar[int]
    LIMITS_FIELD_NUMBER: _ClassVar[int]
    retention: LogRetention
    limits: _limits_pb2.Limits
    def __init__(self, retention: _Optional[_Union[LogRetention, _Mapping]] = ..., limits: _Optional[_Union[_limits_pb2.Limits, _Mapping]] = ...) -> None: ...

class TailLogsRequest(_message.Message):
    __slots__ = ("workspace_id", "workflow_ids", "folder_ids", "triggers", "level", "start_date", "end_date", "execution_id", "min_duration_ms", "max_duration_ms", "min_cost", "max_cost", "model", "details", "include_trace_spans", "include_final_output", "resume_token", "q")
    WORKSPACE_ID_FIELD_NUMBER: _ClassVar[int]
    WORKFLOW_IDS_FIELD_NUMBER: _ClassVar[int]
    FOLDER_IDS_FIELD_NUMBER: _ClassVar[int]
    TRIGGERS_FIELD_NUMBER: _ClassVar[int]
    LEVEL_FIELD_NUMBER: _ClassVar[int]
    START_DATE_FIELD_NUMBER: _ClassVar[int]
    END_DATE_FIELD_NUMBER: _ClassVar[int]
    EXECUTION_ID_FIELD_NUMBER: _ClassVar[int]
    MIN_DURATION_MS_FIELD_NUMBER: _ClassVar[int]
    MAX_DURATION_MS_FIELD_NUMBER: _ClassVar[int]
    MIN_COST_FIELD_NUMBER: _ClassVar[int]
    MAX_COST_FIELD_NUMBER: _ClassVar[int]
    MODEL_FIELD_NUMBER: _ClassVar[int]
    DETAILS_FIELD_NUMBER: _ClassVar[int]
    INCLUDE_TRACE_SPANS_FIELD_NUMBER: _ClassVar[int]
    INCLUDE_FINAL_OUTPUT_FIELD_NUMBER: _ClassVar[int]
    RESUME_TOKEN_FIELD_NUMBER: _ClassVar[int]
    Q_FIELD_NUMBER: _ClassVar[int]
    workspace_id: str
    workflow_ids: _containers.RepeatedScalarFieldContainer[str]
    folder_ids: _containers.RepeatedScalarFieldContainer[str]
    triggers: _containers.RepeatedScalarFieldContainer[str]
    level: str
    start_date: str
    end_date: str
    execution_id: str
    min_duration_ms: int
    max_duration_ms: int
    min_cost: float
    max_cost: float
    model: str
    details: str
    include_trace_spans: bool
    include_final_output: bool
    resume_token: str
    q: str
    def __init__(self, workspace_id: _Optional[str] = ..., workflow_ids: _Optional[_Iterable[str]] = ..., folder_ids: _Optional[_Iterable[str]] = ..., triggers: _Optional[_Iterable[str]] = ..., level: _Optional[str] = ..., start_date: _Optional[str] = ..., end_date: _Optional[str] = ..., execution_id: _Optional[str] = ..., min_duration_ms: _Optional[int] = ..., max_duration_ms: _Optional[int] = ..., min_cost: _Optional[float] = ..., max_cost: _Optional[float] = ..., model: _Optional[str] = ..., details: _Optional[str] = ..., include_trace_spans: _Optional[bool] = ..., include_final_output: _Optional[bool] = ..., resume_token: _Optional[str] = ..., q: _Optional[str] = ...) -> None: ...

class TailLogsResponse(_message.Message):
    __slots__ = ("entry", "resume_token")
    ENTRY_FIELD_NUMBER: _ClassVar[int]
    RESUME_TOKEN_FIELD_NUMBER: _ClassVar[int]
    entry: _log_entry_pb2.LogEntry
    resume_token: str
    def __init__(self, entry: _Optional[_Union[_log_entry_pb2.LogEntry, _Mapping]] = ..., resume_token: _Optional[str] = ...) -> None: ...

class ExportLogsRequest(_message.Message):
    __slots__ = ("workspace_id", "workflow_ids", "folder_ids", "triggers", "level", "start_date", "end_date", "execution_id", "min_duration_ms", "max_duration_ms", "min_cost", "max_cost", "model", "order", "details", "include_trace_spans", "include_final_output", "format", "q")
    WORKSPACE_ID_FIELD_NUMBER: _ClassVar[int]
    WORKFLOW_IDS_FIELD_NUMBER: _ClassVar[int]
    FOLDER_IDS_FIELD_NUMBER: _ClassVar[int]
    TRIGGERS_FIELD_NUMBER: _ClassVar[int]
    LEVEL_FIELD_NUMBER: _ClassVar[int]
    START_DATE_FIELD_NUMBER: _ClassVar[int]
    END_DATE_FIELD_NUMBER: _ClassVar[int]
    EXECUTION_ID_FIELD_NUMBER: _ClassVar[int]
    MIN_DURATION_MS_FIELD_NUMBER: _ClassVar[int]
    MAX_DURATION_MS_FIELD_NUMBER: _ClassVar[int]
    MIN_COST_FIELD_NUMBER: _ClassVar[int]
    MAX_COST_FIELD_NUMBER: _ClassVar[int]
    MODEL_FIELD_NUMBER: _ClassVar[int]
    ORDER_FIELD_NUMBER: _ClassVar[int]
    DETAILS_FIELD_NUMBER: _ClassVar[int]
    INCLUDE_TRACE_SPANS_FIELD_NUMBER: _ClassVar[int]
    INCLUDE_FINAL_OUTPUT_FIELD_NUMBER: _ClassVar[int]
    FORMAT_FIELD_NUMBER: _ClassVar[int]
    Q_FIELD_NUMBER: _ClassVar[int]
    workspace_id: str
    workflow_ids: _containers.RepeatedScalarFieldContainer[str]
    folder_ids: _containers.RepeatedScalarFieldContainer[str]
    triggers: _containers.RepeatedScalarFieldContainer[str]
    level: str
    start_date: str
    end_date: str
    execution_id: str
    min_duration_ms: int
    max_duration_ms: int
    min_cost: float
    max_cost: float
    model: str
    order: str
    details: str
    include_trace_spans: bool
    include_final_output: bool
    format: str
    q: str
    def __init__(self, workspace_id: _Optional[str] = ..., workflow_ids: _Optional[_Iterable[str]] = ..., folder_ids: _Optional[_Iterable[str]] = ..., triggers: _Optional[_Iterable[str]] = ..., level: _Optional[str] = ..., start_date: _Optional[str] = ..., end_date: _Optional[str] = ..., execution_id: _Optional[str] = ..., min_duration_ms: _Optional[int] = ..., max_duration_ms: _Optional[int] = ..., min_cost: _Optional[float] = ..., max_cost: _Optional[float] = ..., model: _Optional[str] = ..., order: _Optional[str] = ..., details: _Optional[str] = ..., include_trace_spans: _Optional[bool] = ..., include_final_output: _Optional[bool] = ..., format: _Optional[str] = ..., q: _Optional[str] = ...) -> None: ...

class ExportLogsResponse(_message.Message):
    __slots__ = ("entries",)
    ENTRIES_FIELD_NUMBER: _ClassVar[int]
    entries: _containers.RepeatedCompositeFieldContainer[_log_entry_pb2.LogEntry]
    def __init__(self, entries: _Optional[_Iterable[_Union[_log_entry_pb2.LogEntry, _Mapping]]] = ...) -> None: ...
