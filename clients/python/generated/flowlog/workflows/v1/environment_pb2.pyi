from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from typing import ClassVar as _ClassVar, Optional as _Optional

DESCRIPTOR: _descriptor.FileDescriptor

class EnvironmentVariable(_message.Message):
    __slots__ = ("name", "updated_at")
    NAME_FIELD_NUMBER: _ClassVar[int]
    UPDATED_AT_FIELD_NUMBER: _ClassVar[int]
    name: str
    updated_at: str
    def __init__(self, name: _Optional[str] = ..., updated_at: _Optional[str] = ...) -> None: ...
