export * from "./record.ts";
export { checkTaskId, newTaskId, TASK_ID_PATTERN } from "./task-id.ts";
export { defaultStorageRoot } from "./storage-root.ts";
export { taskPaths, type TaskPaths } from "./layout.ts";
export { parseRecord, type ParsedRecord, type RecordProblem } from "./parse-record.ts";
export { TaskStore, type ReadResult, type UnreadableTask } from "./task-store.ts";
export { type Incarnation } from "./incarnation.ts";
export { storageHolder } from "./storage-lock.ts";
export { writeFileAtomic } from "./atomic-write.ts";
