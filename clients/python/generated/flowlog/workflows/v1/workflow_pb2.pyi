from google.protobuf import struct_pb2 as _struct_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class Workflow(_message.Message):
    __slots__ = ("id", "workspace_id", "folder_id", "name", "description", "version", "state", "created_at", "updated_at")
    ID_FIELD_NUMBER: _ClassVar[int]
    WORKSPACE_ID_FIELD_NUMBER: _ClassVar[int]
    FOLDER_ID_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    DESCRIPTION_FIELD_NUMBER: _ClassVar[int]
    VERSION_FIELD_NUMBER: _ClassVar[int]
    STATE_FIELD_NUMBER: _ClassVar[int]
    CREATED_AT_FIELD_NUMBER: _ClassVar[int]
    UPDATED_AT_FIELD_NUMBER: _ClassVar[int]
    id: str
    workspace_id: str
    folder_id: str
    name: str
    description: str
    version: int
    state: WorkflowState
    created_at: str
    updated_at: str
    def __init__(self, id: _Optional[str] = ..., workspace_id: _Optional[str] = ..., folder_id: _Optional[str] = ..., name: _Optional[str] = ..., description: _Optional[str] = ..., version: _Optional[int] = ..., state: _Optional[_Union[WorkflowState, _Mapping]] = ..., created_at: _Optional[str] = ..., updated_at: _Optional[str] = ...) -> None: ...

class WorkflowState(_message.Message):
    __slots__ = ("blocks", "edges", "loops", "parallels")
    class BlocksEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: Block
        def __init__(self, key: _Optional[str] = ..., value: _Optional[_Union[Block, _Mapping]] = ...) -> None: ...
    class LoopsEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: Loop
        def __init__(self, key: _Optional[str] = ..., value: _Optional[_Union[Loop, _Mapping]] = ...) -> None: ...
    class ParallelsEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: Parallel
        def __init__(self, key: _Optional[str] = ..., value: _Optional[_Union[Parallel, _Mapping]] = ...) -> None: ...
    BLOCKS_FIELD_NUMBER: _ClassVar[int]
    EDGES_FIELD_NUMBER: _ClassVar[int]
    LOOPS_FIELD_NUMBER: _ClassVar[int]
    PARALLELS_FIELD_NUMBER: _ClassVar[int]
    blocks: _containers.MessageMap[str, Block]
    edges: _containers.RepeatedCompositeFieldContainer[Edge]
    loops: _containers.MessageMap[str, Loop]
    parallels: _containers.MessageMap[str, Parallel]
    def __init__(self, blocks: _Optional[_Mapping[str, Block]] = ..., edges: _Optional[_Iterable[_Union[Edge, _Mapping]]] = ..., loops: _Optional[_Mapping[str, Loop]] = ..., parallels: _Optional[_Mapping[str, Parallel]] = ...) -> None: ...

class Block(_message.Message):
    __slots__ = ("type", "name", "config", "enabled")
    TYPE_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    CONFIG_FIELD_NUMBER: _ClassVar[int]
    ENABLED_FIELD_NUMBER: _ClassVar[int]
    type: str
    name: str
    config: _struct_pb2.Struct
    enabled: bool
    def __init__(self, type: _Optional[str] = ..., name: _Optional[str] = ..., config: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ..., enabled: _Optional[bool] = ...) -> None: ...

class Edge(_message.Message):
    __slots__ = ("source", "target", "source_handle")
    SOURCE_FIELD_NUMBER: _ClassVar[int]
    TARGET_FIELD_NUMBER: _ClassVar[int]
    SOURCE_HANDLE_FIELD_NUMBER: _ClassVar[int]
    source: str
    target: str
    source_handle: str
    def __init__(self, source: _Optional[str] = ..., target: _Optional[str] = ..., source_handle: _Optional[str] = ...) -> None: ...

class Loop(_message.Message):
    __slots__ = ("type", "nodes", "iterations", "collection")
    TYPE_FIELD_NUMBER: _ClassVar[int]
    NODES_FIELD_NUMBER: _ClassVar[int]
    ITERATIONS_FIELD_NUMBER: _ClassVar[int]
    COLLECTION_FIELD_NUMBER: _ClassVar[int]
    type: str
    nodes: _containers.RepeatedScalarFieldContainer[str]
    iterations: int
    collection: _struct_pb2.Value
    def __init__(self, type: _Optional[str] = ..., nodes: _Optional[_Iterable[str]] = ..., iterations: _Optional[int] = ..., collection: _Optional[_Union[_struct_pb2.Value, _Mapping]] = ...) -> None: ...

class Parallel(_message.Message):
    __slots__ = ("type", "nodes", "count", "collection")
    TYPE_FIELD_NUMBER: _ClassVar[int]
    NODES_FIELD_NUMBER: _ClassVar[int]
    COUNT_FIELD_NUMBER: _ClassVar[int]
    COLLECTION_FIELD_NUMBER: _ClassVar[int]
    type: str
    nodes: _containers.RepeatedScalarFieldContainer[str]
    count: int
    collection: _struct_pb2.Value
    def __init__(self, type: _Optional[str] = ..., nodes: _Optional[_Iterable[str]] = ..., count: _Optional[int] = ..., collection: _Optional[_Union[_struct_pb2.Value, _Mapping]] = ...) -> None: ...

class Folder(_message.Message):
    __slots__ = ("id", "workspace_id", "name", "created_at")
    ID_FIELD_NUMBER: _ClassVar[int]
    WORKSPACE_ID_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    CREATED_AT_FIELD_NUMBER: _ClassVar[int]
    id: str
    workspace_id: str
    name: str
    created_at: str
    def __init__(self, id: _Optional[str] = ..., workspace_id: _Optional[str] = ..., name: _Optional[str] = ..., created_at: _Optional[str] = ...) -> None: ...
