/**
 * The layering of src/ (issue 14): dependencies point down only, so each layer can be read, tested and
 * changed without the ones above it. Bottom first; a module may import its own layer and the ones below.
 * Type-only imports carry no code and are exempt, except where determinism is at stake (workflows).
 * Beside src/, gen/ and console/ may import only what is named below (issue 50).
 * `npm run check` runs this (depcruise); docs/operations.md's code-layout section describes the same layers.
 */

/** What the generated serialisers call at run time, beside their generator (codegen/serializers/). */
const serializerRuntime = "^src/codegen/serializers/runtime/";

/** An installed package (node_modules may be a link to another tree's, so not only at the start). */
const packages = "(^|/)node_modules/";
const layers = [
  { name: "base", path: `^src/(util|logging|tools)/|${serializerRuntime}` },
  { name: "domain", path: "^src/domain/" },
  { name: "foundation", path: "^src/(errors|security|config|limits)/" },
  { name: "store", path: "^src/store/" },
  { name: "core", path: "^src/(engine|outbound|blocks|notifications)/" },
  { name: "temporal", path: "^src/temporal/" },
  { name: "services", path: "^src/(services|seed|retention)/" },
  { name: "rpc", path: "^src/rpc/" },
  { name: "surface", path: "^src/(server|gateway)/" },
  { name: "entry", path: "^src/(cli|cluster)/|^src/codegen/(?!serializers/runtime/)" },
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
      name: "no-circular",
      comment:
        "Modules in a cycle cannot be read, tested or changed one at a time (issue 50), even when only types " +
        "close it. src/temporal/ is exempt, for types only (no-circular-at-run-time still holds there): " +
        "workflows name their activities by type and the activities that start workflows name those by " +
        "type, as Temporal's typed calls want.",
      severity: "error",
      from: { path: "^src/", pathNot: "^src/temporal/" },
      to: { circular: true },
    },
    {
      name: "no-circular-at-run-time",
      comment:
        "No cycle of run-time imports anywhere: its modules would load in an order that depends on which of " +
        "them is imported first.",
      severity: "error",
      from: { path: "^src/" },
      to: {
        circular: true,
        dependencyTypesNot: ["type-only"],
        viaOnly: { dependencyTypesNot: ["type-only"] },
      },
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
          "^src/temporal/(execution-ids|delivery-ids|inactivity-ids|endpoint-health-ids|recovery-ids|bulk-job-ids|search-attributes)\\.ts$|" +
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
        path: "^src/(store|outbound|blocks|notifications|temporal)/",
        dependencyTypesNot: ["type-only"],
      },
    },
    {
      name: "console-is-a-client",
      comment:
        "The console (issue 17) runs in the browser and talks to flowlog only through its public API: it may " +
        "import its own code, the generated code and packages, never the server's own modules, not even types.",
      severity: "error",
      from: { path: "^console/" },
      to: { pathNot: `^(console|gen)/|${packages}` },
    },
    {
      name: "generated-code-stands-alone",
      comment:
        "gen/ is written by `npm run generate` and bundled into the console: it may import other generated " +
        "code, packages and the serialiser runtime its generator names, nothing else of src/.",
      severity: "error",
      from: { path: "^gen/" },
      to: { pathNot: `^gen/|${packages}|${serializerRuntime}` },
    },
    {
      name: "serializer-runtime-stands-alone",
      comment:
        "The serialiser runtime is what gen/ reaches of src/, so it imports only itself and packages: gen/ " +
        "and the console that bundles it reach nothing else of the server through it.",
      severity: "error",
      from: { path: serializerRuntime },
      to: { pathNot: `${packages}|${serializerRuntime}` },
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
    tsPreCompilationDeps: true,
    tsConfig: { fileName: "tsconfig.json" },
    enhancedResolveOptions: {
      extensions: [".ts", ".tsx", ".js"],
      exportsFields: ["exports"],
      conditionNames: ["import", "require", "node", "default"],
    },
  },
};
