// The storage's control channel: the holder's socket server and a session per peer (which call the
// supervisor only through ControlTarget), and the client side the CLI and other servers reach it with.
export { LocalSession, type LocalSessionOptions, type ServerIdentity } from "./local-session.ts";
export { SocketServer, type SocketServerOptions } from "./socket-server.ts";
export { askHolder, connectHolder, holderAnswers, type HolderConnection, NO_HOLDER } from "./socket-client.ts";
export type { ControlTarget } from "./target.ts";
