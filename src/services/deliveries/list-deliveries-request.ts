import type { ListDeliveriesRequest } from "../../../gen/flowlog/notifications/v1/deliveries_service_pb.js";
import { type FieldViolation, invalidArgument } from "../../errors/api-errors.js";
import { defaultDeliveriesPageSize } from "../../limits/delivery-limits.js";
import type { DeliveryFilter, DeliveryStatus, HttpStatusClass } from "../../store/delivery-rows.js";
import { isoDate } from "../logs/entry-filter.js";
import { decodeDeliveriesCursor } from "./deliveries-cursor.js";

/**
 * ListDeliveries as a store query (D40). The values each field may take (status, status class, event
 * type, the dates' form, the limit's range) are declared in the .proto and checked by the validation
 * interceptor; what is left needs more than the field's text: dates on the calendar and a cursor this API
 * issued. Both are reported together, so a client fixes them in one round.
 */
export function parseListDeliveries(request: ListDeliveriesRequest): {
  filter: DeliveryFilter;
  limit: number;
} {
  const violations: FieldViolation[] = [];
  const fail = (field: string, message: string) => violations.push({ field, message });
  const createdFrom = isoDate(request.startDate, "startDate", fail);
  const createdTo = isoDate(request.endDate, "endDate", fail);
  const after = request.cursor === undefined ? undefined : decodeDeliveriesCursor(request.cursor);
  if (request.cursor !== undefined && after === undefined)
    fail("cursor", "cursor is not a nextCursor this API returned");
  if (violations.length > 0) throw invalidArgument(violations);
  return {
    filter: {
      workspaceId: request.workspaceId,
      subscriptionId: request.subscriptionId,
      status: request.status as DeliveryStatus | undefined,
      eventId: request.eventId,
      eventType: request.eventType,
      createdFrom,
      createdTo,
      httpStatusClass: request.httpStatusClass as HttpStatusClass | undefined,
      after,
    },
    limit: request.limit ?? defaultDeliveriesPageSize,
  };
}
