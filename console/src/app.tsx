import { useMemo, useState } from "preact/hooks";
import type { Limits } from "../../gen/flowlog/logs/v1/limits_pb.js";
import { createApi } from "./api.js";
import { type Session, SessionContext } from "./context.js";
import { LimitsBar } from "./limits-bar.js";
import { ChartsPage } from "./pages/charts.js";
import { DeliveriesPage } from "./pages/deliveries.js";
import { LogEntryPage } from "./pages/log-entry.js";
import { LogsPage } from "./pages/logs.js";
import { SignIn } from "./pages/sign-in.js";
import { SubscriptionsPage } from "./pages/subscriptions.js";
import { WorkflowsPage } from "./pages/workflows.js";
import { navigate, type Route, routeHref, useRoute } from "./router.js";
import { forgetApiKey, storeApiKey, storedApiKey } from "./session.js";
import { WorkspaceRetention } from "./workspace-retention.js";

const sections = [
  { page: "logs", label: "Logs" },
  { page: "charts", label: "Charts" },
  { page: "deliveries", label: "Deliveries" },
  { page: "subscriptions", label: "Subscriptions" },
  { page: "workflows", label: "Workflows" },
] as const;

export function App() {
  const route = useRoute();
  const [apiKey, setApiKey] = useState(storedApiKey);
  const [limits, setLimits] = useState<Limits>();
  const workspaceId = route.params.get("ws") ?? undefined;
  const api = useMemo(() => (apiKey ? createApi(apiKey, setLimits) : undefined), [apiKey]);

  if (!api || !workspaceId) {
    return (
      <SignIn
        workspaceId={workspaceId}
        onSignedIn={(key, workspace) => {
          storeApiKey(key);
          setApiKey(key);
          if (workspace !== workspaceId || !route.page)
            navigate(
              routeHref(route.page || "logs", route.id, {
                ...Object.fromEntries(route.params),
                ws: workspace,
              }),
              { replace: true },
            );
        }}
      />
    );
  }
  const session: Session = {
    api,
    workspaceId,
    signOut() {
      forgetApiKey();
      setApiKey(undefined);
      setLimits(undefined);
    },
  };
  return (
    <SessionContext.Provider value={session}>
      {/* A button, not a link to "#main": the hash holds the route, so this moves focus itself. */}
      <button type="button" class="skip" onClick={() => document.getElementById("main")?.focus()}>
        Skip to content
      </button>
      <header class="top">
        <span class="brand">flowlog</span>
        <nav aria-label="Sections">
          {sections.map(({ page, label }) => (
            <a
              key={page}
              href={routeHref(page, undefined, { ws: workspaceId })}
              aria-current={route.page === page || (!route.page && page === "logs") ? "page" : undefined}
            >
              {label}
            </a>
          ))}
        </nav>
        <span class="workspace" title="Workspace">
          {workspaceId}
        </span>
        <WorkspaceRetention />
        <button type="button" class="quiet" onClick={session.signOut}>
          Sign out
        </button>
      </header>
      <LimitsBar limits={limits} />
      <main id="main" tabIndex={-1}>
        <Page route={route} />
      </main>
    </SessionContext.Provider>
  );
}

function Page({ route }: { route: Route }) {
  switch (route.page) {
    case "":
    case "logs":
      return route.id ? <LogEntryPage id={route.id} view={route.params} /> : <LogsPage route={route} />;
    case "charts":
      return <ChartsPage route={route} />;
    case "deliveries":
      return <DeliveriesPage route={route} />;
    case "subscriptions":
      return <SubscriptionsPage route={route} />;
    case "workflows":
      return <WorkflowsPage route={route} />;
    default:
      return (
        <section>
          <h1>Not found</h1>
          <p>
            There is no page <code>{route.page}</code>.{" "}
            <a href={routeHref("logs", undefined, { ws: route.params.get("ws") ?? undefined })}>
              See the logs.
            </a>
          </p>
        </section>
      );
  }
}
