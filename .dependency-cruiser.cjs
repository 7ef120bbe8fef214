// The layering of outlive's code, checked by dependency-cruiser (`npm run layers`, and in CI through
// test/layout/layers.test.ts). Type-only imports count (tsPreCompilationDeps): a type that points up is a
// layer that points up, and the next value import along it is an import cycle at load time.
/** The lib/ folders below the supervisor: data flows probe → place → spawn → record → observe → replay. */
const BELOW_SUPERVISOR = "^lib/(store|proc|placement|spawn|spawner|observe|replay|kill|end|output|pty|retention|generation|census|start|pool|rpc|ready|ports|limits)/";

/** What the driver loads inside the container, and what it must never load. */
const INSIDE = "^harness/(inside|cases|shared|examples)/|^harness/mod\\.ts$";
const HOST = "^harness/(host/|run-scenarios\\.ts$)";

module.exports = {
  forbidden: [
    {
      name: "no-cycles",
      severity: "error",
      comment: "No import cycles anywhere, type-only imports included.",
      from: {},
      to: { circular: true },
    },
    {
      name: "lib-is-the-library",
      severity: "error",
      comment: "lib/ imports nothing of the harness, the scripts, the benchmarks or the tests.",
      from: { path: "^lib/" },
      to: { path: "^(harness|scripts|bench|test|examples)/" },
    },
    {
      name: "transport-below-everything",
      severity: "error",
      comment: "lib/rpc/ is the wire's transport, below the supervisor and the spawner that speak it: it needs only the errors and the storage's layout.",
      from: { path: "^lib/rpc/" },
      to: { path: "^lib/", pathNot: "^lib/(rpc/|errors\\.ts$|store/layout\\.ts$)" },
    },
    {
      name: "control-channel-calls-through-its-interface",
      severity: "error",
      comment: "lib/control/ (the storage's control channel) reaches the supervisor only through ControlTarget: the supervisor starts it.",
      from: { path: "^lib/control/" },
      to: { path: "^lib/(supervisor|session|mcp|agent)/" },
    },
    {
      name: "lower-layers-never-import-higher",
      severity: "error",
      comment: "Nothing below the supervisor imports the supervisor or what is built on it (the session, MCP, agents).",
      from: { path: BELOW_SUPERVISOR },
      to: { path: "^lib/(supervisor|session|mcp|agent)/" },
    },
    {
      name: "supervisor-below-its-users",
      severity: "error",
      comment: "The supervisor does not import the session, MCP or the agents built on it; the session not MCP.",
      from: { path: "^lib/supervisor/" },
      to: { path: "^lib/(session|mcp|agent)/" },
    },
    {
      name: "session-below-mcp",
      severity: "error",
      from: { path: "^lib/session/" },
      to: { path: "^lib/mcp/" },
    },
    {
      name: "placements-are-not-the-spawner",
      severity: "error",
      comment: "A placement makes its spawner's home; it never imports the spawner itself.",
      from: { path: "^lib/placement/" },
      to: { path: "^lib/spawner/" },
    },
    {
      name: "harness-shared-is-neither-side",
      severity: "error",
      comment: "harness/shared/ is read by both sides: it imports neither.",
      from: { path: "^harness/shared/" },
      to: { path: "^harness/(inside|host|cases)/|^harness/run-scenarios\\.ts$" },
    },
    {
      name: "inside-never-imports-the-host",
      severity: "error",
      comment: "What the driver loads inside the container (the inside, the cases, the shared side, the public face) never loads the host side. With lib-is-the-library and harness-shared-is-neither-side, no chain can reach it either.",
      from: { path: INSIDE },
      to: { path: HOST, dependencyTypesNot: ["dynamic-import"] },
    },
    {
      name: "inside-never-imports-scripts",
      severity: "error",
      comment: "The scripts (the CLI) load the host side; the inside never loads them.",
      from: { path: INSIDE },
      to: { path: "^(scripts|bench)/" },
    },
    {
      name: "one-way-in",
      severity: "error",
      comment: "The one way from the inside to the host CLI is a case run on its own: run-if-main.ts's import(), loaded only then.",
      from: { path: INSIDE, pathNot: "^harness/inside/run-if-main\\.ts$" },
      to: { path: HOST, dependencyTypes: ["dynamic-import"] },
    },
    {
      name: "engines-each-on-their-own",
      severity: "error",
      comment: "An engine's folder imports no other engine's.",
      from: { path: "^harness/host/container/engine/([^/]+)/" },
      to: { path: "^harness/host/container/engine/", pathNot: "^harness/host/container/engine/$1/" },
    },
  ],
  options: {
    tsPreCompilationDeps: true,
    tsConfig: { fileName: "tsconfig.json" },
    doNotFollow: { path: "node_modules" },
    exclude: { path: "^(node_modules|dist)/" },
    reporterOptions: { text: { highlightFocused: true } },
  },
};
