from flowlog.workflows.v1 import environment_pb2 as _environment_pb2
from flowlog.workflows.v1 import workflow_pb2 as _workflow_pb2
from google.api import annotations_pb2 as _annotations_pb2
from google.api import field_behavior_pb2 as _field_behavior_pb2
from google.protobuf import struct_pb2 as _struct_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class CreateWorkflowRequest(_message.Message):
    __slots__ = ("workspace_id", "folder_id", "name", "description", "state")
    WORKSPACE_ID_FIELD_NUMBER: _ClassVar[int]
    FOLDER_ID_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    DESCRIPTION_FIELD_NUMBER: _ClassVar[int]
    STATE_FIELD_NUMBER: _ClassVar[int]
    workspace_id: str
    folder_id: str
    name: str
    description: str
    state: _workflow_pb2.WorkflowState
    def __init__(self, workspace_id: _Optional[str] = ..., folder_id: _Optional[str] = ..., name: _Optional[str] = ..., description: _Optional[str] = ..., state: _Optional[_Union[_workflow_pb2.WorkflowState, _Mapping]] = ...) -> None: ...

class CreateWorkflowResponse(_message.Message):
    __slots__ = ("workflow",)
    WORKFLOW_FIELD_NUMBER: _ClassVar[int]
    workflow: _workflow_pb2.Workflow
    def __init__(self, workflow: _Optional[_Union[_workflow_pb2.Workflow, _Mapping]] = ...) -> None: ...

class GetWorkflowRequest(_message.Message):
    __slots__ = ("id", "version")
    ID_FIELD_NUMBER: _ClassVar[int]
    VERSION_FIELD_NUMBER: _ClassVar[int]
    id: str
    version: int
    def __init__(self, id: _Optional[str] = ..., version: _Optional[int] = ...) -> None: ...

class GetWorkflowResponse(_message.Message):
    __slots__ = ("workflow",)
    WORKFLOW_FIELD_NUMBER: _ClassVar[int]
    workflow: _workflow_pb2.Workflow
    def __init__(self, workflow: _Optional[_Union[_workflow_pb2.Workflow, _Mapping]] = ...) -> None: ...

class ListWorkflowsRequest(_message.Message):
    __slots__ = ("workspace_id", "folder_id")
    WORKSPACE_ID_FIELD_NUMBER: _ClassVar[int]
    FOLDER_ID_FIELD_NUMBER: _ClassVar[int]
    workspace_id: str
    folder_id: str
    def __init__(self, workspace_id: _Optional[str] = ..., folder_id: _Optional[str] = ...) -> None: ...

class ListWorkflowsResponse(_message.Message):
    __slots__ = ("workflows",)
    WORKFLOWS_FIELD_NUMBER: _ClassVar[int]
    workflows: _containers.RepeatedCompositeFieldContainer[_workflow_pb2.Workflow]
    def __init__(self, workflows: _Optional[_Iterable[_Union[_workflow_pb2.Workflow, _Mapping]]] = ...) -> None: ...

class UpdateWorkflowRequest(_message.Message):
    __slots__ = ("id", "folder_id", "name", "description", "state")
    ID_FIELD_NUMBER: _ClassVar[int]
    FOLDER_ID_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    DESCRIPTION_FIELD_NUMBER: _ClassVar[int]
    STATE_FIELD_NUMBER: _ClassVar[int]
    id: str
    folder_id: str
    name: str
    description: str
    state: _workflow_pb2.WorkflowState
    def __init__(self, id: _Optional[str] = ..., folder_id: _Optional[str] = ..., name: _Optional[str] = ..., description: _Optional[str] = ..., state: _Optional[_Union[_workflow_pb2.WorkflowState, _Mapping]] = ...) -> None: ...

class UpdateWorkflowResponse(_message.Message):
    __slots__ = ("workflow",)
    WORKFLOW_FIELD_NUMBER: _ClassVar[int]
    workflow: _workflow_pb2.Workflow
    def __init__(self, workflow: _Optional[_Union[_workflow_pb2.Workflow, _Mapping]] = ...) -> None: ...

class DeleteWorkflowRequest(_message.Message):
    __slots__ = ("id",)
    ID_FIELD_NUMBER: _ClassVar[int]
    id: str
    def __init__(self, id: _Optional[str] = ...) -> None: ...

class DeleteWorkflowResponse(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class CreateFolderRequest(_message.Message):
    __slots__ = ("workspace_id", "name")
    WORKSPACE_ID_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    workspace_id: str
    name: str
    def __init__(self, workspace_id: _Optional[str] = ..., name: _Optional[str] = ...) -> None: ...

class CreateFolderResponse(_message.Message):
    __slots__ = ("folder",)
    FOLDER_FIELD_NUMBER: _ClassVar[int]
    folder: _workflow_pb2.Folder
    def __init__(self, folder: _Optional[_Union[_workflow_pb2.Folder, _Mapping]] = ...) -> None: ...

class ListFoldersRequest(_message.Message):
    __slots__ = ("workspace_id",)
    WORKSPACE_ID_FIELD_NUMBER: _ClassVar[int]
    workspace_id: str
    def __init__(self, workspace_id: _Optional[str] = ...) -> None: ...

class ListFoldersResponse(_message.Message):
    __slots__ = ("folders",)
    FOLDERS_FIELD_NUMBER: _ClassVar[int]
    folders: _containers.RepeatedCompositeFieldContainer[_workflow_pb2.Folder]
    def __init__(self, folders: _Optional[_Iterable[_Union[_workflow_pb2.Folder, _Mapping]]] = ...) -> None: ...

class SetEnvironmentVariableRequest(_message.Message):
    __slots__ = ("workspace_id", "name", "value")
    WORKSPACE_ID_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    VALUE_FIELD_NUMBER: _ClassVar[int]
    workspace_id: str
    name: str
    value: str
    def __init__(self, workspace_id: _Optional[str] = ..., name: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...

class SetEnvironmentVariableResponse(_message.Message):
    __slots__ = ("variable",)
    VARIABLE_FIELD_NUMBER: _ClassVar[int]
    variable: _environment_pb2.EnvironmentVariable
    def __init__(self, variable: _Optional[_Union[_environment_pb2.EnvironmentVariable, _Mapping]] = ...) -> None: ...

class ListEnvironmentVariablesRequest(_message.Message):
    __slots__ = ("workspace_id",)
    WORKSPACE_ID_FIELD_NUMBER: _ClassVar[int]
    workspace_id: str
    def __init__(self, workspace_id: _Optional[str] = ...) -> None: ...

class ListEnvironmentVariablesResponse(_message.Message):
    __slots__ = ("variables",)
    VARIABLES_FIELD_NUMBER: _ClassVar[int]
    variables: _containers.RepeatedCompositeFieldContainer[_environment_pb2.EnvironmentVariable]
    def __init__(self, variables: _Optional[_Iterable[_Union[_environment_pb2.EnvironmentVariable, _Mapping]]] = ...) -> None: ...

class DeleteEnvironmentVariableRequest(_message.Message):
    __slots__ = ("workspace_id", "name")
    WORKSPACE_ID_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    workspace_id: str
    name: str
    def __init__(self, workspace_id: _Optional[str] = ..., name: _Optional[str] = ...) -> None: ...

class DeleteEnvironmentVariableResponse(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class ExecuteWorkflowRequest(_message.Message):
    __slots__ = ("id", "input")
    ID_FIELD_NUMBER: _ClassVar[int]
    INPUT_FIELD_NUMBER: _ClassVar[int]
    ASYNC_FIELD_NUMBER: _ClassVar[int]
    id: str
    input: _struct_pb2.Value
    def __init__(self, id: _Optional[str] = ..., input: _Optional[_Union[_struct_pb2.Value, _Mapping]] = ..., **kwargs) -> None: ...

class ExecuteWorkflowResponse(_message.Message):
    __slots__ = ("execution_id", "status", "output")
    EXECUTION_ID_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    OUTPUT_FIELD_NUMBER: _ClassVar[int]
    execution_id: str
    status: str
    output: _struct_pb2.Value
    def __init__(self, execution_id: _Optional[str] = ..., status: _Optional[str] = ..., output: _Optional[_Union[_struct_pb2.Value, _Mapping]] = ...) -> None: ...

class ChatWorkflowRequest(_message.Message):
    __slots__ = ("id", "message")
    ID_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_FIELD_NUMBER: _ClassVar[int]
    id: str
    message: str
    def __init__(self, id: _Optional[str] = ..., message: _Optional[str] = ...) -> None: ...

class ChatWorkflowResponse(_message.Message):
    __slots__ = ("execution_id", "status", "output")
    EXECUTION_ID_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    OUTPUT_FIELD_NUMBER: _ClassVar[int]
    execution_id: str
    status: str
    output: _struct_pb2.Value
    def __init__(self, execution_id: _Optional[str] = ..., status: _Optional[str] = ..., output: _Optional[_Union[_struct_pb2.Value, _Mapping]] = ...) -> None: ...

class CancelExecutionRequest(_message.Message):
    __slots__ = ("execution_id", "reason")
    EXECUTION_ID_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    execution_id: str
    reason: str
    def __init__(self, execution_id: _Optional[str] = ..., reason: _Optional[str] = ...) -> None: ...

class CancelExecutionResponse(_message.Message):
    __slots__ = ("execution_id",)
    EXECUTION_ID_FIELD_NUMBER: _ClassVar[int]
    execution_id: str
    def __init__(self, execution_id: _Optional[str] = ...) -> None: ...

class RetryExecutionRequest(_message.Message):
    __slots__ = ("execution_id", "version")
    EXECUTION_ID_FIELD_NUMBER: _ClassVar[int]
    FROM_FIELD_NUMBER: _ClassVar[int]
    VERSION_FIELD_NUMBER: _ClassVar[int]
    execution_id: str
    version: str
    def __init__(self, execution_id: _Optional[str] = ..., version: _Optional[str] = ..., **kwargs) -> None: ...

class RetryExecutionResponse(_message.Message):
    __slots__ = ("execution_id", "retry_of", "version")
    EXECUTION_ID_FIELD_NUMBER: _ClassVar[int]
    RETRY_OF_FIELD_NUMBER: _ClassVar[int]
    VERSION_FIELD_NUMBER: _ClassVar[int]
    execution_id: str
    retry_of: str
    version: int
    def __init__(self, execution_id: _Optional[str] = ..., retry_of: _Optional[str] = ..., version: _Optional[int] = ...) -> None: ...

class BulkRetryExecutionsRequest(_message.Message):
    __slots__ = ("workspace_id", "workflow_ids", "folder_ids", "triggers", "level", "start_date", "end_date", "min_duration_ms", "max_duration_ms", "min_cost", "max_cost", "model", "version", "preview")
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
    FROM_FIELD_NUMBER: _ClassVar[int]
    VERSION_FIELD_NUMBER: _ClassVar[int]
    PREVIEW_FIELD_NUMBER: _ClassVar[int]
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
    version: str
    preview: bool
    def __init__(self, workspace_id: _Optional[str] = ..., workflow_ids: _Optional[_Iterable[str]] = ..., folder_ids: _Optional[_Iterable[str]] = ..., triggers: _Optional[_Iterable[str]] = ..., level: _Optional[str] = ..., start_date: _Optional[str] = ..., end_date: _Optional[str] = ..., min_duration_ms: _Optional[int] = ..., max_duration_ms: _Optional[int] = ..., min_cost: _Optional[float] = ..., max_cost: _Optional[float] = ..., model: _Optional[str] = ..., version: _Optional[str] = ..., preview: _Optional[bool] = ..., **kwargs) -> None: ...

class BulkRetryExecutionsResponse(_message.Message):
    __slots__ = ("executions", "job")
    EXECUTIONS_FIELD_NUMBER: _ClassVar[int]
    JOB_FIELD_NUMBER: _ClassVar[int]
    executions: int
    job: BulkJob
    def __init__(self, executions: _Optional[int] = ..., job: _Optional[_Union[BulkJob, _Mapping]] = ...) -> None: ...

class BulkCancelExecutionsRequest(_message.Message):
    __slots__ = ("workspace_id", "workflow_ids", "folder_ids", "triggers", "start_date", "end_date", "reason", "preview")
    WORKSPACE_ID_FIELD_NUMBER: _ClassVar[int]
    WORKFLOW_IDS_FIELD_NUMBER: _ClassVar[int]
    FOLDER_IDS_FIELD_NUMBER: _ClassVar[int]
    TRIGGERS_FIELD_NUMBER: _ClassVar[int]
    START_DATE_FIELD_NUMBER: _ClassVar[int]
    END_DATE_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    PREVIEW_FIELD_NUMBER: _ClassVar[int]
    workspace_id: str
    workflow_ids: _containers.RepeatedScalarFieldContainer[str]
    folder_ids: _containers.RepeatedScalarFieldContainer[str]
    triggers: _containers.RepeatedScalarFieldContainer[str]
    start_date: str
    end_date: str
    reason: str
    preview: bool
    def __init__(self, workspace_id: _Optional[str] = ..., workflow_ids: _Optional[_Iterable[str]] = ..., folder_ids: _Optional[_Iterable[str]] = ..., triggers: _Optional[_Iterable[str]] = ..., start_date: _Optional[str] = ..., end_date: _Optional[str] = ..., reason: _Optional[str] = ..., preview: _Optional[bool] = ...) -> None: ...

class BulkCancelExecutionsResponse(_message.Message):
    __slots__ = ("executions", "job")
    EXECUTIONS_FIELD_NUMBER: _ClassVar[int]
    JOB_FIELD_NUMBER: _ClassVar[int]
    executions: int
    job: BulkJob
    def __init__(self, executions: _Optional[int] = ..., job: _Optional[_Union[BulkJob, _Mapping]] = ...) -> None: ...

class BulkJob(_message.Message):
    __slots__ = ("id", "kind", "status", "total", "processed", "done", "failed", "version", "started_at", "ended_at", "waiting_until", "last_failure", "stopped_reason")
    ID_FIELD_NUMBER: _ClassVar[int]
    KIND_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    TOTAL_FIELD_NUMBER: _ClassVar[int]
    PROCESSED_FIELD_NUMBER: _ClassVar[int]
    DONE_FIELD_NUMBER: _ClassVar[int]
    FAILED_FIELD_NUMBER: _ClassVar[int]
    FROM_FIELD_NUMBER: _ClassVar[int]
    VERSION_FIELD_NUMBER: _ClassVar[int]
    STARTED_AT_FIELD_NUMBER: _ClassVar[int]
    ENDED_AT_FIELD_NUMBER: _ClassVar[int]
    WAITING_UNTIL_FIELD_NUMBER: _ClassVar[int]
    LAST_FAILURE_FIELD_NUMBER: _ClassVar[int]
    STOPPED_REASON_FIELD_NUMBER: _ClassVar[int]
    id: str
    kind: str
    status: str
    total: int
    processed: int
    done: int
    failed: int
    version: str
    started_at: str
    ended_at: str
    waiting_until: str
    last_failure: str
    stopped_reason: str
    def __init__(self, id: _Optional[str] = ..., kind: _Optional[str] = ..., status: _Optional[str] = ..., total: _Optional[int] = ..., processed: _Optional[int] = ..., done: _Optional[int] = ..., failed: _Optional[int] = ..., version: _Optional[str] = ..., started_at: _Optional[str] = ..., ended_at: _Optional[str] = ..., waiting_until: _Optional[str] = ..., last_failure: _Optional[str] = ..., stopped_reason: _Optional[str] = ..., **kwargs) -> None: ...

class GetBulkJobRequest(_message.Message):
    __slots__ = ("workspace_id", "id")
    WORKSPACE_ID_FIELD_NUMBER: _ClassVar[int]
    ID_FIELD_NUMBER: _ClassVar[int]
    workspace_id: str
    id: str
    def __init__(self, workspace_id: _Optional[str] = ..., id: _Optional[str] = ...) -> None: ...

class GetBulkJobResponse(_message.Message):
    __slots__ = ("job",)
    JOB_FIELD_NUMBER: _ClassVar[int]
    job: BulkJob
    def __init__(self, job: _Optional[_Union[BulkJob, _Mapping]] = ...) -> None: ...

class CancelBulkJobRequest(_message.Message):
    __slots__ = ("workspace_id", "id")
    WORKSPACE_ID_FIELD_NUMBER: _ClassVar[int]
    ID_FIELD_NUMBER: _ClassVar[int]
    workspace_id: str
    id: str
    def __init__(self, workspace_id: _Optional[str] = ..., id: _Optional[str] = ...) -> None: ...

class CancelBulkJobResponse(_message.Message):
    __slots__ = ("job",)
    JOB_FIELD_NUMBER: _ClassVar[int]
    job: BulkJob
    def __init__(self, job: _Optional[_Union[BulkJob, _Mapping]] = ...) -> None: ...
