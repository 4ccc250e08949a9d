import type { Plan } from "../../limits/plans.js";

/**
 * What an account gets when its creator does not say (D6). Apart from the service so that the CLI can show
 * them in its help without loading the service's rules.
 */
export const defaultPlan: Plan = "free";
export const defaultWorkspaceName = "Default workspace";
