"""A Python grpcio client that knows nothing of flowlog's .proto files.

It discovers the services through server reflection, builds the message classes from the
descriptors it receives, calls one unary method with the x-api-key metadata and prints what
happened as one JSON object: the polyglot promise of the API, as a Python user would test it.

usage: grpc_client.py TARGET SERVICE METHOD REQUEST_JSON API_KEY
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


def main() -> None:
    target, service_name, method_name, request_json, api_key = sys.argv[1:6]
    with grpc.insecure_channel(target) as channel:
        database = ProtoReflectionDescriptorDatabase(channel)
        pool = DescriptorPool(database)
        method = pool.FindServiceByName(service_name).FindMethodByName(method_name)
        request_class = GetMessageClass(method.input_type)
        response_class = GetMessageClass(method.output_type)
        call = channel.unary_unary(
            f"/{service_name}/{method_name}",
            request_serializer=request_class.SerializeToString,
            response_deserializer=response_class.FromString,
        )
        result = {"services": sorted(database.get_services())}
        try:
            response, info = call.with_call(
                json_format.Parse(request_json, request_class()),
                metadata=[("x-api-key", api_key)],
                timeout=10,
            )
            result["response"] = json_format.MessageToDict(response)
            result["headers"] = dict(info.initial_metadata())
        except grpc.RpcError as error:
            result["error"] = {"code": error.code().name, "details": error.details()}
    print(json.dumps(result))


if __name__ == "__main__":
    main()
