import type { DeliveryStatus, HttpStatusClass } from "../../src/store/delivery-rows.js";

/**
 * The oracle of the delivery log's filters and order (D40), written out plainly over what a test wrote:
 * for the tests that compare a walk of every page with what it must give. Named as ListDeliveries' query
 * parameters; times are Unix milliseconds.
 */
export interface DeliveryQuery {
  subscriptionId?: string;
  status?: DeliveryStatus;
  eventId?: string;
  eventType?: string;
  startDate?: number;
  endDate?: number;
  httpStatusClass?: HttpStatusClass;
}

/** A delivery as the test wrote it: where it stands and its last attempt's HTTP status. */
export interface WrittenDelivery {
  id: string;
  subscriptionId: string;
  eventId: string;
  eventType: string;
  createdAt: number;
  status: DeliveryStatus;
  lastHttpStatus: number | null;
}

export function statusClassOf(httpStatus: number | null): HttpStatusClass | undefined {
  if (httpStatus === null) return "none";
  const hundreds = Math.floor(httpStatus / 100);
  return hundreds >= 2 && hundreds <= 5 ? (`${hundreds}xx` as HttpStatusClass) : undefined;
}

export function matchesDelivery(delivery: WrittenDelivery, q: DeliveryQuery): boolean {
  return (
    (q.subscriptionId === undefined || delivery.subscriptionId === q.subscriptionId) &&
    (q.status === undefined || delivery.status === q.status) &&
    (q.eventId === undefined || delivery.eventId === q.eventId) &&
    (q.eventType === undefined || delivery.eventType === q.eventType) &&
    (q.startDate === undefined || delivery.createdAt >= q.startDate) &&
    (q.endDate === undefined || delivery.createdAt <= q.endDate) &&
    (q.httpStatusClass === undefined || statusClassOf(delivery.lastHttpStatus) === q.httpStatusClass)
  );
}

/** The list's order: newest first by creation, then ids in descending byte order, as both stores compare them. */
export function newestFirst(a: WrittenDelivery, b: WrittenDelivery): number {
  return b.createdAt - a.createdAt || Buffer.compare(Buffer.from(b.id), Buffer.from(a.id));
}
