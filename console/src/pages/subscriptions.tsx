import type { Route } from "../router.js";

export function SubscriptionsPage(_: { route: Route }) {
  return (
    <section>
      <h1>Subscriptions</h1>
      <p>Coming in this issue.</p>
    </section>
  );
}
