import type { DescField } from "@bufbuild/protobuf";
import { getOption } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import { field as fieldRules } from "../gen/buf/validate/validate_pb.js";
import { ListLogsRequestSchema } from "../gen/flowlog/logs/v1/logs_service_pb.js";
import { ListDeliveriesRequestSchema } from "../gen/flowlog/notifications/v1/deliveries_service_pb.js";
import {
  NotificationSubscriptionSchema,
  WebhookChannelSchema,
} from "../gen/flowlog/notifications/v1/notifications_service_pb.js";
import { subscribableEventTypes } from "../src/domain/event-types.js";
import { deliveryStatuses, httpStatusClasses } from "../src/store/delivery-rows.js";
import { levels, triggers } from "../src/store/records.js";
import { channels, signatureSchemes } from "../src/store/subscriptions-store.js";

// Issue 14: the values a field may take are declared in the .proto (buf.validate `in`) for the validator
// and the OpenAPI document; the store's lists of the same values (its CHECK constraints and types) must
// say the same, or a value would pass one and be refused by the other.

/** The `in` list of a string field's rules, or of its elements' for a repeated field. */
function allowed(field: DescField): string[] {
  const rules = getOption(field, fieldRules).type;
  if (rules.case === "string") return rules.value.in;
  if (rules.case === "repeated" && rules.value.items?.type.case === "string")
    return rules.value.items.type.value.in;
  throw new Error(`${field.name} has no string in-list`);
}

describe("the .proto's allowed values are the store's", () => {
  it.each([
    ["ListLogsRequest.level", ListLogsRequestSchema.field.level, levels],
    ["ListLogsRequest.triggers", ListLogsRequestSchema.field.triggers, triggers],
    ["ListDeliveriesRequest.status", ListDeliveriesRequestSchema.field.status, deliveryStatuses],
    [
      "ListDeliveriesRequest.http_status_class",
      ListDeliveriesRequestSchema.field.httpStatusClass,
      httpStatusClasses,
    ],
    ["NotificationSubscription.channel", NotificationSubscriptionSchema.field.channel, channels],
    ["NotificationSubscription.level_filter", NotificationSubscriptionSchema.field.levelFilter, levels],
    ["NotificationSubscription.trigger_filter", NotificationSubscriptionSchema.field.triggerFilter, triggers],
    [
      "NotificationSubscription.event_types",
      NotificationSubscriptionSchema.field.eventTypes,
      subscribableEventTypes,
    ],
    ["WebhookChannel.signature_scheme", WebhookChannelSchema.field.signatureScheme, signatureSchemes],
  ] as const)("%s", (_name, field, values) => {
    expect([...allowed(field)].sort()).toEqual([...values].sort());
  });
});
