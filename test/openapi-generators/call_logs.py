"""Calls the logs endpoints through the client openapi-python-client generated, as a user of it would.

Reads {packagesDir, baseUrl, key, workspaceId, closedClasses} as JSON on stdin; prints JSON: each call's
answer class, its `to_dict()` (what the client read, written back) and the paths of fields it did not know:
those a model of `closedClasses` (the document's schemas that list their properties and no others) kept in
its additional_properties.
"""

import json
import sys

import attrs


def main() -> None:
    given = json.load(sys.stdin)
    # The generated package, flowlog_api, imported as its users would import it.
    sys.path.insert(0, given["packagesDir"])
    from flowlog_api import AuthenticatedClient
    from flowlog_api.api.logs_service import (
        logs_service_get_execution,
        logs_service_get_log,
        logs_service_list_logs,
    )
    from flowlog_api.models import LogsServiceListLogsDetails as Details
    from flowlog_api.models import LogsServiceListLogsLevel as Level
    from flowlog_api.models import LogsServiceListLogsOrder as Order
    from flowlog_api.models import LogsServiceListLogsTriggersItem as Trigger

    closed_classes = set(given["closedClasses"])
    client = AuthenticatedClient(
        base_url=given["baseUrl"], token=given["key"], prefix="", auth_header_name="x-api-key"
    )
    workspace_id = given["workspaceId"]
    list_logs = logs_service_list_logs.sync

    def report(answer) -> dict:
        return {
            "class": type(answer).__name__,
            "json": answer.to_dict(),
            "unknownFields": unknown_fields(answer, "$", closed_classes),
        }

    # Keyed by the query string that asks the REST API for the same page. The client repeats a list
    # parameter (triggers=api&triggers=schedule) where the document says comma-separated; the gateway
    # takes both forms (D9).
    lists = {
        "level=error&order=asc": {"level": Level.ERROR, "order": Order.ASC},
        "triggers=api,schedule&minDurationMs=1000": {
            "triggers": [Trigger.API, Trigger.SCHEDULE],
            "min_duration_ms": 1000,
        },
        "details=full&includeTraceSpans=true&includeFinalOutput=true&limit=5": {
            "details": Details.FULL,
            "include_trace_spans": True,
            "include_final_output": True,
            "limit": 5,
        },
        "q=uptime": {"q": "uptime"},
    }
    pages = {
        query: report(list_logs(client=client, workspace_id=workspace_id, **options))
        for query, options in lists.items()
    }

    # Every page of 20, following nextCursor.
    followed, cursor = [], None
    while True:
        page = list_logs(client=client, workspace_id=workspace_id, limit=20, cursor=cursor)
        followed.extend(entry.id for entry in page.data)
        if not isinstance(page.next_cursor, str):
            break
        cursor = page.next_cursor

    first = list_logs(client=client, workspace_id=workspace_id, limit=1).data[0]
    log = logs_service_get_log.sync(client=client, id=first.id)
    execution = logs_service_get_execution.sync(client=client, execution_id=first.execution_id)
    missing = logs_service_get_log.sync(client=client, id="log_does_not_exist")
    print(
        json.dumps(
            {
                "lists": pages,
                "followed": followed,
                "log": report(log),
                "execution": report(execution),
                "missing": report(missing),
            }
        )
    )


def unknown_fields(value, path: str, closed_classes: set) -> list:
    """Fields of the answer that no schema of the document declares, by path."""
    if isinstance(value, list):
        return [
            f for i, item in enumerate(value) for f in unknown_fields(item, f"{path}[{i}]", closed_classes)
        ]
    if not attrs.has(type(value)):
        return []
    extra = getattr(value, "additional_properties", {})
    found = [f"{path}.{key}" for key in extra] if type(value).__name__ in closed_classes else []
    for field in attrs.fields(type(value)):
        if field.name != "additional_properties":
            found.extend(unknown_fields(getattr(value, field.name), f"{path}.{field.name}", closed_classes))
    for key, item in extra.items():
        found.extend(unknown_fields(item, f"{path}.{key}", closed_classes))
    return found


main()
