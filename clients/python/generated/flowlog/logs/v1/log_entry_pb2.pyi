from flowlog.logs.v1 import limits_pb2 as _limits_pb2
from google.api import field_behavior_pb2 as _field_behavior_pb2
from google.protobuf import struct_pb2 as _struct_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class LogEntry(_message.Message):
    __slots__ = ("id", "workflow_id", "execution_id", "level", "trigger", "started_at", "ended_at", "total_duration_ms", "cost", "files", "workflow", "execution_data", "limits", "retry_of", "retried_by")
    ID_FIELD_NUMBER: _ClassVar[int]
    WORKFLOW_ID_FIELD_NUMBER: _ClassVar[int]
    EXECUTION_ID_FIELD_NUMBER: _ClassVar[int]
    LEVEL_FIELD_NUMBER: _ClassVar[int]
    TRIGGER_FIELD_NUMBER: _ClassVar[int]
    STARTED_AT_FIELD_NUMBER: _ClassVar[int]
    ENDED_AT_FIELD_NUMBER: _ClassVar[int]
    TOTAL_DURATION_MS_FIELD_NUMBER: _ClassVar[int]
    COST_FIELD_NUMBER: _ClassVar[int]
    FILES_FIELD_NUMBER: _ClassVar[int]
    WORKFLOW_FIELD_NUMBER: _ClassVar[int]
    EXECUTION_DATA_FIELD_NUMBER: _ClassVar[int]
    LIMITS_FIELD_NUMBER: _ClassVar[int]
    RETRY_OF_FIELD_NUMBER: _ClassVar[int]
    RETRIED_BY_FIELD_NUMBER: _ClassVar[int]
    id: str
    workflow_id: str
    execution_id: str
    level: str
    trigger: str
    started_at: str
    ended_at: str
    total_duration_ms: int
    cost: Cost
    files: _struct_pb2.Value
    workflow: WorkflowSummary
    execution_data: ExecutionData
    limits: _limits_pb2.Limits
    retry_of: str
    retried_by: str
    def __init__(self, id: _Optional[str] = ..., workflow_id: _Optional[str] = ..., execution_id: _Optional[str] = ..., level: _Optional[str] = ..., trigger: _Optional[str] = ..., started_at: _Optional[str] = ..., ended_at: _Optional[str] = ..., total_duration_ms: _Optional[int] = ..., cost: _Optional[_Union[Cost, _Mapping]] = ..., files: _Optional[_Union[_struct_pb2.Value, _Mapping]] = ..., workflow: _Optional[_Union[WorkflowSummary, _Mapping]] = ..., execution_data: _Optional[_Union[ExecutionData, _Mapping]] = ..., limits: _Optional[_Union[_limits_pb2.Limits, _Mapping]] = ..., retry_of: _Optional[str] = ..., retried_by: _Optional[str] = ...) -> None: ...

class WorkflowSummary(_message.Message):
    __slots__ = ("id", "name", "description")
    ID_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    DESCRIPTION_FIELD_NUMBER: _ClassVar[int]
    id: str
    name: str
    description: str
    def __init__(self, id: _Optional[str] = ..., name: _Optional[str] = ..., description: _Optional[str] = ...) -> None: ...

class Cost(_message.Message):
    __slots__ = ("total", "tokens", "models")
    class ModelsEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: ModelCost
        def __init__(self, key: _Optional[str] = ..., value: _Optional[_Union[ModelCost, _Mapping]] = ...) -> None: ...
    TOTAL_FIELD_NUMBER: _ClassVar[int]
    TOKENS_FIELD_NUMBER: _ClassVar[int]
    MODELS_FIELD_NUMBER: _ClassVar[int]
    total: float
    tokens: TokenUsage
    models: _containers.MessageMap[str, ModelCost]
    def __init__(self, total: _Optional[float] = ..., tokens: _Optional[_Union[TokenUsage, _Mapping]] = ..., models: _Optional[_Mapping[str, ModelCost]] = ...) -> None: ...

class TokenUsage(_message.Message):
    __slots__ = ("prompt", "completion", "total")
    PROMPT_FIELD_NUMBER: _ClassVar[int]
    COMPLETION_FIELD_NUMBER: _ClassVar[int]
    TOTAL_FIELD_NUMBER: _ClassVar[int]
    prompt: int
    completion: int
    total: int
    def __init__(self, prompt: _Optional[int] = ..., completion: _Optional[int] = ..., total: _Optional[int] = ...) -> None: ...

class ModelCost(_message.Message):
    __slots__ = ("input", "output", "total", "tokens")
    INPUT_FIELD_NUMBER: _ClassVar[int]
    OUTPUT_FIELD_NUMBER: _ClassVar[int]
    TOTAL_FIELD_NUMBER: _ClassVar[int]
    TOKENS_FIELD_NUMBER: _ClassVar[int]
    input: float
    output: float
    total: float
    tokens: TokenUsage
    def __init__(self, input: _Optional[float] = ..., output: _Optional[float] = ..., total: _Optional[float] = ..., tokens: _Optional[_Union[TokenUsage, _Mapping]] = ...) -> None: ...

class ExecutionData(_message.Message):
    __slots__ = ("trace_spans", "final_output")
    TRACE_SPANS_FIELD_NUMBER: _ClassVar[int]
    FINAL_OUTPUT_FIELD_NUMBER: _ClassVar[int]
    trace_spans: _containers.RepeatedCompositeFieldContainer[TraceSpan]
    final_output: _struct_pb2.Value
    def __init__(self, trace_spans: _Optional[_Iterable[_Union[TraceSpan, _Mapping]]] = ..., final_output: _Optional[_Union[_struct_pb2.Value, _Mapping]] = ...) -> None: ...

class TraceSpan(_message.Message):
    __slots__ = ("id", "name", "type", "status", "start_time", "end_time", "duration_ms", "input", "output", "error", "model", "tokens", "cost", "children")
    ID_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    TYPE_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    START_TIME_FIELD_NUMBER: _ClassVar[int]
    END_TIME_FIELD_NUMBER: _ClassVar[int]
    DURATION_MS_FIELD_NUMBER: _ClassVar[int]
    INPUT_FIELD_NUMBER: _ClassVar[int]
    OUTPUT_FIELD_NUMBER: _ClassVar[int]
    ERROR_FIELD_NUMBER: _ClassVar[int]
    MODEL_FIELD_NUMBER: _ClassVar[int]
    TOKENS_FIELD_NUMBER: _ClassVar[int]
    COST_FIELD_NUMBER: _ClassVar[int]
    CHILDREN_FIELD_NUMBER: _ClassVar[int]
    id: str
    name: str
    type: str
    status: str
    start_time: str
    end_time: str
    duration_ms: int
    input: _struct_pb2.Value
    output: _struct_pb2.Value
    error: str
    model: str
    tokens: TokenUsage
    cost: float
    children: _containers.RepeatedCompositeFieldContainer[TraceSpan]
    def __init__(self, id: _Optional[str] = ..., name: _Optional[str] = ..., type: _Optional[str] = ..., status: _Optional[str] = ..., start_time: _Optional[str] = ..., end_time: _Optional[str] = ..., duration_ms: _Optional[int] = ..., input: _Optional[_Union[_struct_pb2.Value, _Mapping]] = ..., output: _Optional[_Union[_struct_pb2.Value, _Mapping]] = ..., error: _Optional[str] = ..., model: _Optional[str] = ..., tokens: _Optional[_Union[TokenUsage, _Mapping]] = ..., cost: _Optional[float] = ..., children: _Optional[_Iterable[_Union[TraceSpan, _Mapping]]] = ...) -> None: ...
