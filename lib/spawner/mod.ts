// The spawner's public face: its channel's methods and checks (for a client of its own), and its types. The
// client, the program and the homes are the supervisor's own (lib/supervisor/wiring.ts wires them).
export { checkSettleRequest, checkSpawnRequest, type HelloAnswer, type SettleAnswer, type SpawnAnswer, SPAWNER_METHODS, type SpawnRequest } from "./protocol.ts";
export type { SpawnerHome } from "../placement/spawner-home.ts";
export type { SpawnerRecord } from "./spawner-server.ts";
