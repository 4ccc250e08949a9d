import type { Interceptor } from "@connectrpc/connect";
import type { FrontDoor } from "./front-door.js";
import { requiredFields } from "./required-fields.js";

/**
 * The interceptor chain every protocol shares (REST enters through the same handlers), outermost first:
 * the front door's (rate headers on every answer, faults made public, D10, D11), then validation of
 * required fields. Authentication and the token take happen before either, at the front door (D28).
 */
export function createInterceptors(frontDoor: FrontDoor): Interceptor[] {
  return [frontDoor.interceptor, requiredFields];
}
