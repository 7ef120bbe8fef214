export { choosePrune, type PruneRule } from "./choose-prune.ts";
export { parseDuration } from "./duration.ts";
export { DEFAULT_RETENTION } from "./options.ts";
export { type PruneResult } from "./retention.ts";
