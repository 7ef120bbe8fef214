export { DEFAULT_MAX_LINE_BYTES, fromRpcError, METHODS, type MethodName, NOTIFICATIONS, PROTOCOL_VERSION, PROTOCOL_VERSIONS, RPC_ERRORS, RpcError, toRpcError } from "./protocol.ts";
export { LineSplitter, type LineEvent } from "./lines.ts";
export { type Channel, type EndpointOptions, RpcEndpoint } from "./endpoint.ts";
export { LocalSession, type LocalSessionOptions, type ServerIdentity } from "./local-session.ts";
export { MAX_SOCKET_PATH, SocketServer, type SocketServerOptions } from "./socket-server.ts";
export { askHolder, connectHolder, holderAnswers, type HolderConnection, NO_HOLDER } from "./socket-client.ts";
export { controlSocketPath } from "./socket-path.ts";
export { openSession, type Session, type SessionOptions } from "./session.ts";
export { RPC_SCHEMA_ID, rpcSchemaPath } from "./schema/mod.ts";
