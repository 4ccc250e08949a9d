import { defineSearchAttributeKey, SearchAttributeType } from "@temporalio/common";

/**
 * Our custom search attributes, so executions can be found in the Temporal UI and by visibility queries.
 * Workflows and clients use these typed keys; nothing else spells the names. Workflow code imports this
 * module, so it must stay light: the registration, which needs the Temporal API protos, lives in
 * register-search-attributes.ts. (Every workflow evaluates its bundle's imports afresh; loading the protos
 * there cost each execution about 12 ms of worker CPU, per the execution bench's profile.)
 */
export const flowlogSearchAttributes = {
  workspaceId: defineSearchAttributeKey("FlowlogWorkspaceId", SearchAttributeType.KEYWORD),
  workflowId: defineSearchAttributeKey("FlowlogWorkflowId", SearchAttributeType.KEYWORD),
  trigger: defineSearchAttributeKey("FlowlogTrigger", SearchAttributeType.KEYWORD),
  subscriptionId: defineSearchAttributeKey("FlowlogSubscriptionId", SearchAttributeType.KEYWORD),
  /** A fan-out's subscriptions (issue 12): one workflow delivers to several. */
  subscriptionIds: defineSearchAttributeKey("FlowlogSubscriptionIds", SearchAttributeType.KEYWORD_LIST),
  /** The deliveries a workflow makes, by the id receivers see in service-delivery-id. */
  deliveryIds: defineSearchAttributeKey("FlowlogDeliveryIds", SearchAttributeType.KEYWORD_LIST),
} as const;
