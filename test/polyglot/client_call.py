"""flowlog's own Python client package (clients/python, D49) calling LogsService as a user's code would.

Unlike grpc_client.py it knows the API from the package's generated modules, not from reflection. It
calls METHOD with REQUEST_JSON and the x-api-key metadata and prints one JSON object: the answer and the
response headers, or the gRPC error's code and details.

usage: client_call.py TARGET METHOD REQUEST_JSON API_KEY
"""

import json
import sys

import grpc
from flowlog.logs.v1 import logs_service_pb2, logs_service_pb2_grpc
from google.protobuf import json_format


def main() -> None:
    target, method, request_json, api_key = sys.argv[1:5]
    with grpc.insecure_channel(target) as channel:
        stub = logs_service_pb2_grpc.LogsServiceStub(channel)
        request = json_format.Parse(request_json, getattr(logs_service_pb2, f"{method}Request")())
        try:
            response, call = getattr(stub, method).with_call(request, metadata=[("x-api-key", api_key)])
            headers = dict(call.initial_metadata())
            print(json.dumps({"response": json_format.MessageToDict(response), "headers": headers}))
        except grpc.RpcError as error:
            print(json.dumps({"error": {"code": error.code().name, "details": error.details()}}))


if __name__ == "__main__":
    main()
