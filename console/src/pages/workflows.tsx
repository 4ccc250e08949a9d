import type { Route } from "../router.js";

export function WorkflowsPage(_: { route: Route }) {
  return (
    <section>
      <h1>Workflows</h1>
      <p>Coming in this issue.</p>
    </section>
  );
}
