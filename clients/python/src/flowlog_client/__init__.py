"""flowlog's Python client: the generated modules are under `flowlog.<service>.v1`; this adds what is not generated."""

from flowlog_client.webhooks import verify_webhook

__all__ = ["verify_webhook"]
