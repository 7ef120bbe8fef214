export { checkPtySize, DEFAULT_PTY_SIZE, MAX_PTY_SIDE, type PtySize } from "./size.ts";
export { type PtyPaths, ptyPaths } from "./holder.ts";
export { controls, openTerminal, type PtyInfo, readPtyInfo, resizeTerminal, type TerminalWriter, writeTerminal } from "./terminal.ts";
export { terminalOf } from "./task-terminal.ts";
export { unescapeKeys } from "./escapes.ts";
