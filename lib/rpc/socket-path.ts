import { storagePaths } from "../store/layout.ts";

/**
 * The socket of a storage's control channel. It sits in a directory of its
 * own, made 0700 by the holder, so only the storage's owner (and root) can
 * reach it whatever the storage directory's own read bits are.
 *
 * @example
 * ```ts
 * import { controlSocketPath } from "./socket-path.ts";
 * console.log(controlSocketPath("/srv/outlive")); // "/srv/outlive/control/supervisor.sock"
 * ```
 */
export function controlSocketPath(root: string): string {
  return storagePaths(root).controlSocket;
}

/** The longest path a unix socket address holds on Linux (sun_path less its NUL). */
export const MAX_SOCKET_PATH = 107;
