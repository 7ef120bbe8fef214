export { parseProcStat, readProcStat, isGone, type ProcStat } from "./stat.ts";
export { bootId } from "./boot-id.ts";
export { parseCgroupFile, readCgroup } from "./cgroup.ts";
export { inspectPid, isRunning, isSameProcess, type LiveProcess, type ProcessIdentity } from "./identity.ts";
export { processesWithArg } from "./arg-holders.ts";
