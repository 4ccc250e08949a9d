import type { Route } from "../router.js";

export function ChartsPage(_: { route: Route }) {
  return (
    <section>
      <h1>Charts</h1>
      <p>Coming in this issue.</p>
    </section>
  );
}
