export type { MemoryEvents, Placement, PlacementProbe, PlacementTask, SpawnPlan } from "./placement.ts";
export { ProcessGroupPlacement } from "./process-group/process-group.ts";
export { CgroupV2Placement, type CgroupV2Options } from "./cgroup-v2/cgroup-v2.ts";
export { SystemdScopePlacement, type SystemdScopeOptions } from "./systemd-scope/systemd-scope.ts";
export { choosePlacement, makePlacements, type PlacementChoiceResult } from "./choose.ts";
export { cgroupControllers, cgroupProcs, findCgroup2Mount } from "./cgroup-fs.ts";
