import os
from http.server import BaseHTTPRequestHandler, HTTPServer

from flowlog_client import verify_webhook
from standardwebhooks.webhooks import Webhook, WebhookVerificationError


class Receiver(BaseHTTPRequestHandler):
    """One receiver for both signature schemes a subscription can choose (D39)."""

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers["content-length"]))
        if "webhook-signature" in self.headers:
            # signatureScheme "standard": Standard Webhooks' own verifier, with the whsec_ secret.
            try:
                Webhook(os.environ["STANDARD_WEBHOOK_SECRET"]).verify(body, dict(self.headers))
                verified = True
            except WebhookVerificationError:  # a wrong signature, or a timestamp five minutes off
                verified = False
        else:
            # signatureScheme "service" (the default): service-signature, t=<ms>,v1=<hex>.
            verified = verify_webhook(os.environ["FLOWLOG_WEBHOOK_SECRET"], body, self.headers)
        print("verified" if verified else "rejected", self.headers["idempotency-key"], len(body), flush=True)
        self.send_response(204 if verified else 401)  # any 2xx acknowledges; 401 is not retried
        self.end_headers()


HTTPServer(("127.0.0.1", int(os.environ.get("PORT", "4000"))), Receiver).serve_forever()
