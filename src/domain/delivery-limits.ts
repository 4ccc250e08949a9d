/**
 * The bounds of the delivery log (D40) that are not the .proto's to declare: the page size of a
 * delivery's attempts (its 1,000 maximum is declared on GetDeliveryRequest) and how often one delivery may
 * be sent again.
 */

/** Attempts of a delivery answered when the request does not say (D40: the newest 100). */
export const defaultAttemptsPageSize = 100;

/**
 * Redeliveries of one delivery (D40): each is a series of up to D19's attempts sent to the receiver
 * again, so without a bound one delivery could have a receiver sent its event without end.
 */
export const maxRedeliveries = 20;

/** The series a delivery may have: its first and each redelivery (D19, D40). */
export const maxDeliverySeries = 1 + maxRedeliveries;
