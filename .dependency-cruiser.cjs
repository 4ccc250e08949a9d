/**
 * The layering of src/ (issue 14): dependencies point down only, so each layer can be read, tested and
 * changed without the ones above it. Bottom first; a module may import its own layer and the ones below.
 * Type-only imports carry no code and are exempt, except where determinism is at stake (workflows).
 * `npm run check` runs this (depcruise); the README's code-layout section describes the same layers.
 */
const layers = [
  { name: "base", path: "^src/(util|logging|tools)/" },
  { name: "domain", path: "^src/domain/" },
  { name: "foundation", path: "^src/(errors|security|config)/" },
  { name: "store", path: "^src/store/" },
  { name: "core", path: "^src/(engine|outbound|blocks|notifications|alerts)/" },
  { name: "temporal", path: "^src/temporal/" },
  { name: "services", path: "^src/(services|seed)/" },
  { name: "rpc", path: "^src/rpc/" },
  { name: "surface", path: "^src/(server|gateway)/" },
  { name: "entry", path: "^src/(cli|codegen|cluster)/" },
];

const upward = layers.slice(0, -1).map((layer, index) => ({
  name: `no-upward-from-${layer.name}`,
  comment: `${layer.name} may not import the layers above it: ${layers
    .slice(index + 1)
    .map((l) => l.name)
    .join(", ")}`,
  severity: "error",
  from: { path: layer.path },
  to: {
    path: layers
      .slice(index + 1)
      .map((l) => l.path)
      .join("|"),
    dependencyTypesNot: ["type-only"],
  },
}));

module.exports = {
  forbidden: [
    ...upward,
    {
      name: "no-circular-surface",
      comment:
        "A request's way through the port points one way: the RPC layer, the REST gateway, the server and the " +
        "metrics they report to import no module that imports them back, types included.",
      severity: "error",
      from: { path: "^src/(rpc|gateway|server)/|^src/logging/" },
      to: { circular: true },
    },
    {
      name: "workflows-deterministic",
      comment:
        "Workflow code runs in Temporal's deterministic sandbox and is replayed: it may import only other " +
        "workflow code, the engine, pure domain tables and helpers, and the workflow SDK; activities as types only.",
      severity: "error",
      from: { path: "^src/temporal/workflows/" },
      to: {
        pathNot:
          "^src/temporal/workflows/|^src/engine/|^src/domain/(model-prices|delivery-schedule)\\.ts$|" +
          "^src/util/(own-property|time)\\.ts$|" +
          "^src/temporal/(execution-ids|delivery-ids|inactivity-ids|endpoint-health-ids|search-attributes)\\.ts$|" +
          "@temporalio/(workflow|common)",
        dependencyTypesNot: ["type-only"],
      },
    },
    {
      name: "engine-pure",
      comment:
        "The engine runs inside workflows: no store, no outbound I/O, no Temporal activities at run time.",
      severity: "error",
      from: { path: "^src/engine/" },
      to: {
        path: "^src/(store|outbound|blocks|notifications|alerts|temporal)/",
        dependencyTypesNot: ["type-only"],
      },
    },
    {
      name: "console-is-a-client",
      comment:
        "The console (issue 17) runs in the browser and talks to flowlog only through its public API: it may " +
        "import the generated code and browser libraries, never the server's own modules.",
      severity: "error",
      from: { path: "^console/" },
      to: { path: "^src/", dependencyTypesNot: ["type-only"] },
    },
    {
      name: "durable-code-not-dev-tooling",
      comment:
        "Workflows, activities and the worker run in production; the dev server tooling is for flowlog dev.",
      severity: "error",
      from: { path: "^src/temporal/", pathNot: "^src/temporal/dev/" },
      to: { path: "^src/temporal/dev/|^src/tools/" },
    },
  ],
  options: {
    doNotFollow: { path: "node_modules" },
    exclude: { path: "^gen/" },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: "tsconfig.json" },
    enhancedResolveOptions: { extensions: [".ts", ".tsx", ".js"] },
  },
};
