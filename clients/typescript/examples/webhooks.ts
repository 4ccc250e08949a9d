import { createServer } from "node:http";
import { verifyWebhook } from "@flowlog/client";
import { Webhook } from "standardwebhooks";

// One receiver for both signature schemes a subscription can choose (D39).
createServer(async (req, res) => {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk);
  const raw = Buffer.concat(chunks);
  const body = raw.toString("utf8");
  let verified = false;
  if (req.headers["webhook-signature"]) {
    // signatureScheme "standard": Standard Webhooks' own verifier, with the whsec_ secret.
    try {
      new Webhook(process.env.STANDARD_WEBHOOK_SECRET ?? "").verify(
        body,
        req.headers as Record<string, string>,
      );
      verified = true;
    } catch {} // a wrong signature, or a timestamp over five minutes off, throws
  } else {
    // signatureScheme "service" (the default): service-signature, t=<ms>,v1=<hex>.
    verified = verifyWebhook({
      secret: process.env.FLOWLOG_WEBHOOK_SECRET ?? "",
      body,
      headers: req.headers,
    });
  }
  console.log(verified ? "verified" : "rejected", req.headers["idempotency-key"], raw.length);
  res.writeHead(verified ? 204 : 401).end(); // any 2xx acknowledges; 401 is not retried
}).listen(Number(process.env.PORT ?? 4000));
