"""Verifying a flowlog webhook signed the service's own way (the default `signatureScheme`).

`service-signature: t=<ms>,v1=<hex>` is the lowercase hex HMAC-SHA256 of `<t>.<body>` keyed with the
subscription's secret, where t equals `service-timestamp` (spec "Authentication" 3, D19). While a rotated
secret is in its grace period the header carries one `v1` per secret (D33); any match verifies. A webhook
with `signatureScheme: "standard"` is verified with PyPI's `standardwebhooks` instead (D39).
"""

import hashlib
import hmac
import time
from collections.abc import Mapping


def verify_webhook(secret: str, body: bytes, headers: Mapping[str, str], tolerance_ms: int = 300_000) -> bool:
    """True when `body` (the raw bytes received) carries a valid signature no older than `tolerance_ms`.

    `headers` is any mapping whose lookups ignore case as HTTP's do (http.server's, Flask's, Starlette's);
    a plain dict must have lowercase keys. Answer 401 when this is False.
    """
    timestamp = headers.get("service-timestamp") or ""
    parts = (headers.get("service-signature") or "").strip().split(",")
    if not timestamp.isdigit() or parts[0] != f"t={timestamp}":
        return False
    if abs(time.time() * 1000 - int(timestamp)) > tolerance_ms:
        return False
    expected = hmac.new(secret.encode(), timestamp.encode() + b"." + body, hashlib.sha256).hexdigest()
    # Every candidate is compared, so the time taken does not tell which one matched.
    matches = [hmac.compare_digest(expected, part[3:]) for part in parts[1:] if part.startswith("v1=")]
    return any(matches)
