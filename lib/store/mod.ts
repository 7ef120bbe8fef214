export * from "./record/record.ts";
export { checkTaskId, newTaskId, TASK_ID_PATTERN } from "./record/task-id.ts";
export { defaultStorageRoot } from "./storage/storage-root.ts";
export { isQuarantineNote, quarantineNotePath, taskPaths, type TaskPaths } from "./layout.ts";
export { parseRecord, type ParsedRecord, type RecordProblem } from "./record/parse-record.ts";
export { TaskStore, type ReadResult, type UnreadableTask } from "./task-store.ts";
export { type Incarnation } from "./storage/incarnation.ts";
export { storageHolder } from "./storage/storage-lock.ts";
export { writeFileAtomic } from "./write/atomic-write.ts";
