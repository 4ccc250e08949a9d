"""schemathesis hooks for test/fuzz.test.ts (loaded through SCHEMATHESIS_HOOKS).

A cursor is opaque: only the nextCursor values this API issued are valid, each with the order it was
issued for (D8). Its schema can say neither, so a schema-valid string would be rightly refused. This hook
gives a query with a non-empty cursor one of the real cursors the test hands over and that cursor's order,
as a client following nextCursor would. An empty cursor, which the schema forbids, is left as it is for
the negative cases. Cursors the API did not issue are tested in logs-api.test.ts.
"""

import json
import os

import schemathesis

ORDER_OF_CURSOR = json.loads(os.environ.get("FLOWLOG_FUZZ_CURSOR_ORDERS", "{}"))


@schemathesis.hook
def map_query(ctx, query):
    cursor = query.get("cursor") if query else None
    if not isinstance(cursor, str) or cursor == "" or not ORDER_OF_CURSOR:
        return query
    if cursor not in ORDER_OF_CURSOR:
        cursor = sorted(ORDER_OF_CURSOR)[len(cursor) % len(ORDER_OF_CURSOR)]
        query["cursor"] = cursor
    if query.get("order", "desc") in ("asc", "desc"):
        query["order"] = ORDER_OF_CURSOR[cursor]
    return query
