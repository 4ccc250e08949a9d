"""schemathesis hooks for test/fuzz.test.ts (loaded through SCHEMATHESIS_HOOKS).

A cursor is opaque: only the nextCursor values this API issued are valid, each with the order it was
issued for (D8). Its schema can say neither, so a schema-valid string would be rightly refused. This hook
gives a query with a non-empty cursor one of the real cursors the test hands over and that cursor's order,
as a client following nextCursor would. An empty cursor, which the schema forbids, is left as it is for
the negative cases. Cursors the API did not issue are tested in logs-api.test.ts.

A search (D45) must hold a word of at most 100 letters or digits; a schema cannot say what a letter is in
a pattern every tool reads alike, so a schema-valid q without one is given a word, as a user types one.
The 200-character bound is the schema's, and a longer q is left as it is for the negative cases. Queries
without a word are tested in logs-search.test.ts.
"""

import json
import os
import unicodedata

import schemathesis

ORDER_OF_CURSOR = json.loads(os.environ.get("FLOWLOG_FUZZ_CURSOR_ORDERS", "{}"))


def holds_a_searchable_word(q):
    words, word = [], ""
    for char in unicodedata.normalize("NFKC", q):
        if char.isalnum():
            word += char
        else:
            words.append(word)
            word = ""
    words = [w for w in [*words, word] if w]
    return bool(words) and all(len(w) <= 100 for w in words)


@schemathesis.hook
def map_query(ctx, query):
    q = query.get("q") if query else None
    if isinstance(q, str) and len(q) <= 200 and not holds_a_searchable_word(q):
        query["q"] = "timeout"
    cursor = query.get("cursor") if query else None
    if not isinstance(cursor, str) or cursor == "" or not ORDER_OF_CURSOR:
        return query
    if cursor not in ORDER_OF_CURSOR:
        cursor = sorted(ORDER_OF_CURSOR)[len(cursor) % len(ORDER_OF_CURSOR)]
        query["cursor"] = cursor
    if query.get("order", "desc") in ("asc", "desc"):
        query["order"] = ORDER_OF_CURSOR[cursor]
    return query
