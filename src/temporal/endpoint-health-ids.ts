/** One endpoint-health watcher per failing webhook or chat subscription (D35). */
export interface EndpointWatch {
  subscriptionId: string;
}

/** Fixed, so every failure finds the one running watcher instead of adding a second (idempotent). */
export function endpointWatchId(subscriptionId: string): string {
  return `endpoint-health-${subscriptionId}`;
}

/** A delivery of the subscription failed: the watcher looks again at once. */
export const endpointFailedSignal = "endpointFailed";
