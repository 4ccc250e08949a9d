/** The ports of one Temporal server process running all four services (frontend, history, matching, worker). */
export interface TemporalPorts {
  /** The frontend's gRPC port: what TEMPORAL_ADDRESS names. */
  frontend: number;
  frontendHttp: number;
  frontendMembership: number;
  history: number;
  historyMembership: number;
  matching: number;
  matchingMembership: number;
  worker: number;
  workerMembership: number;
  /** The server's own Prometheus metrics. */
  metrics: number;
}

export const temporalDatabases = { persistence: "temporal", visibility: "temporal_visibility" } as const;

/**
 * The server's configuration (D32): PostgreSQL for persistence and for visibility (its SQL visibility
 * store supports our custom search attributes), every service on loopback, Prometheus metrics. JSON is
 * YAML, so the file is written as JSON. History shards cannot be changed after the first start: 4 suit one
 * machine, and docs/deploy.md says how to choose for more.
 */
export function temporalServerConfig(options: {
  ports: TemporalPorts;
  postgresPort: number;
  postgresUser: string;
  /** Kept in the configuration file, its owner's alone (issue 49). */
  postgresPassword: string;
  dynamicConfigFile: string;
}): object {
  const { ports } = options;
  const datastore = (databaseName: string, maxConns: number) => ({
    sql: {
      pluginName: "postgres12",
      databaseName,
      connectAddr: `127.0.0.1:${options.postgresPort}`,
      connectProtocol: "tcp",
      user: options.postgresUser,
      password: options.postgresPassword,
      maxConns,
      maxIdleConns: maxConns,
      maxConnLifetime: "1h",
    },
  });
  const service = (grpcPort: number, membershipPort: number, extra: object = {}) => ({
    rpc: { grpcPort, membershipPort, bindOnLocalHost: true, ...extra },
  });
  return {
    log: { stdout: true, level: "warn" },
    persistence: {
      defaultStore: "default",
      visibilityStore: "visibility",
      numHistoryShards: 4,
      datastores: {
        default: datastore(temporalDatabases.persistence, 20),
        visibility: datastore(temporalDatabases.visibility, 10),
      },
    },
    global: {
      membership: { maxJoinDuration: "30s", broadcastAddress: "127.0.0.1" },
      metrics: {
        prometheus: {
          framework: "tally",
          timerType: "histogram",
          listenAddress: `127.0.0.1:${ports.metrics}`,
        },
      },
    },
    services: {
      frontend: service(ports.frontend, ports.frontendMembership, { httpPort: ports.frontendHttp }),
      history: service(ports.history, ports.historyMembership),
      matching: service(ports.matching, ports.matchingMembership),
      worker: service(ports.worker, ports.workerMembership),
    },
    clusterMetadata: {
      enableGlobalNamespace: false,
      failoverVersionIncrement: 10,
      masterClusterName: "active",
      currentClusterName: "active",
      clusterInformation: {
        active: {
          enabled: true,
          initialFailoverVersion: 1,
          rpcName: "frontend",
          rpcAddress: `127.0.0.1:${ports.frontend}`,
        },
      },
    },
    dcRedirectionPolicy: { policy: "noop" },
    dynamicConfigClient: { filepath: options.dynamicConfigFile, pollInterval: "10s" },
  };
}

/**
 * The same settings `flowlog dev` gives its dev server (dev-server.ts says why each one): fair dispatch
 * by workspace (issue 11), task hand-off in milliseconds instead of up to 50 ms per shard read, and eager
 * activities (issue 12).
 */
export function temporalDynamicConfig(): object {
  const value = (v: unknown) => [{ value: v }];
  return {
    "matching.enableFairness": value(true),
    "history.transferProcessorMaxPollRPS": value(1000),
    "history.timerProcessorMaxPollRPS": value(1000),
    "system.enableActivityEagerExecution": value(true),
  };
}

/** The Web UI's configuration: the frontend it reads, its port, the namespace it opens on. */
export function temporalUiConfig(options: {
  frontendPort: number;
  uiPort: number;
  namespace: string;
}): object {
  return {
    temporalGrpcAddress: `127.0.0.1:${options.frontendPort}`,
    host: "127.0.0.1",
    port: options.uiPort,
    enableUi: true,
    defaultNamespace: options.namespace,
    notifyOnNewVersion: false,
    auth: { enabled: false },
    cors: { allowOrigins: [`http://localhost:${options.uiPort}`, `http://127.0.0.1:${options.uiPort}`] },
  };
}
