import type { Interceptor } from "@connectrpc/connect";
import type { FrontDoor } from "./front-door.js";
import { tracingInterceptor } from "./tracing-interceptor.js";
import { validation } from "./validation.js";

/**
 * The interceptor chain every protocol shares (REST enters through the same handlers), outermost first:
 * the RPC's server span when tracing is on (D50), the front door's (rate headers on every answer, faults
 * made public, D10, D11), then validation as the .proto files declare it. Authentication and the token take happen before either, at the front door (D28).
 */
export function createInterceptors(frontDoor: FrontDoor): Interceptor[] {
  return [tracingInterceptor, frontDoor.interceptor, validation];
}
