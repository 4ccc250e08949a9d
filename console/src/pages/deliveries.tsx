import type { Route } from "../router.js";

export function DeliveriesPage(_: { route: Route }) {
  return (
    <section>
      <h1>Deliveries</h1>
      <p>Coming in this issue.</p>
    </section>
  );
}
