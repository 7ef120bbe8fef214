export { checkSettleRequest, checkSpawnRequest, type HelloAnswer, type SettleAnswer, type SpawnAnswer, SPAWNER_MAX_LINE_BYTES, SPAWNER_METHODS, type SpawnRequest } from "./protocol.ts";
export { SpawnerClient, type SpawnerClientOptions, spawnerMainPath } from "./spawner-client.ts";
export { CgroupSpawnerHome, type SpawnerHome, SystemdSpawnerHome } from "./spawner-home.ts";
export { type SpawnerRecord, serveSpawner, type SpawnerServerOptions } from "./spawner-server.ts";
