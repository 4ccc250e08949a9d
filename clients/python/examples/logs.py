import os
from urllib.parse import urlsplit

import grpc
from flowlog.logs.v1 import logs_service_pb2 as logs
from flowlog.logs.v1.logs_service_pb2_grpc import LogsServiceStub

workspace = os.environ["FLOWLOG_WORKSPACE"]
key = [("x-api-key", os.environ["FLOWLOG_API_KEY"])]  # gRPC metadata on every call
with grpc.insecure_channel(urlsplit(os.environ["FLOWLOG_URL"]).netloc) as channel:
    client = LogsServiceStub(channel)
    # The five newest entries, then one of them in its detail form (workflow, spans, cost by model).
    page = client.ListLogs(logs.ListLogsRequest(workspace_id=workspace, limit=5), metadata=key)
    for entry in page.data:
        print("listed", entry.id, entry.level, entry.total_duration_ms)
    log = client.GetLog(logs.GetLogRequest(id=page.data[0].id), metadata=key).data
    print("got", log.id, log.workflow.name, log.cost.total)
    # Entries as they are written, until stopped (D44): a heartbeat message has no entry.
    for message in client.TailLogs(logs.TailLogsRequest(workspace_id=workspace), metadata=key):
        if message.HasField("entry"):
            print("tailed", message.entry.id, message.entry.level)
