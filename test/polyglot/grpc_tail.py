"""A Python grpcio client that follows flowlog's log tail knowing nothing of its .proto files.

It discovers LogsService through server reflection, opens the TailLogs server stream with the
x-api-key metadata, and prints each message as one JSON line as it arrives (a heartbeat has no
entry), until it has printed ENTRIES entries: D44's stream as a Python user would follow it.

usage: grpc_tail.py TARGET REQUEST_JSON API_KEY ENTRIES
"""

import json
import sys

import grpc
from google.protobuf import json_format
from google.protobuf.descriptor_pool import DescriptorPool
from google.protobuf.message_factory import GetMessageClass
from grpc_reflection.v1alpha.proto_reflection_descriptor_database import (
    ProtoReflectionDescriptorDatabase,
)

SERVICE = "flowlog.logs.v1.LogsService"


def main() -> None:
    target, request_json, api_key, entries = sys.argv[1:5]
    with grpc.insecure_channel(target) as channel:
        pool = DescriptorPool(ProtoReflectionDescriptorDatabase(channel))
        method = pool.FindServiceByName(SERVICE).FindMethodByName("TailLogs")
        request_class = GetMessageClass(method.input_type)
        response_class = GetMessageClass(method.output_type)
        tail = channel.unary_stream(
            f"/{SERVICE}/TailLogs",
            request_serializer=request_class.SerializeToString,
            response_deserializer=response_class.FromString,
        )
        stream = tail(json_format.Parse(request_json, request_class()), metadata=[("x-api-key", api_key)])
        left = int(entries)
        for message in stream:
            print(json.dumps(json_format.MessageToDict(message)), flush=True)
            if message.HasField("entry"):
                left -= 1
                if left == 0:
                    stream.cancel()
                    break


if __name__ == "__main__":
    main()
