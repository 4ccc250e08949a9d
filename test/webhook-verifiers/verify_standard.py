"""Standard Webhooks' own Python verifier (PyPI `standardwebhooks`), for test/endpoint-settings.test.ts.

Reads one JSON object per line on stdin, {"secret", "body", "headers"}, and prints one line per object:
"ok" when the library's Webhook(secret).verify(body, headers) accepts it, else the error's class name.
"""

import json
import sys

from standardwebhooks.webhooks import Webhook

for line in sys.stdin:
    case = json.loads(line)
    try:
        Webhook(case["secret"]).verify(case["body"].encode("utf-8"), case["headers"])
        print("ok")
    except Exception as error:  # the verdict is the output: any refusal is a line naming it
        print(type(error).__name__)
