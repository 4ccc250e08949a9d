/** D7: every *At field is Date.prototype.toISOString(): milliseconds and Z, always. */
export const isoMs = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;
