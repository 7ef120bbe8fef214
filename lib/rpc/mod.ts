// The wire protocol's transport (JSON-RPC 2.0, one object a line): below the supervisor and the spawner,
// which both speak it. The storage's control channel is lib/control; opening a session, lib/session.
export { DEFAULT_MAX_LINE_BYTES, fromRpcError, METHODS, type MethodName, NOTIFICATIONS, PROTOCOL_VERSION, PROTOCOL_VERSIONS, RPC_ERRORS, RpcError, toRpcError } from "./protocol.ts";
export { LineSplitter, type LineEvent } from "./lines.ts";
export { type Channel, type EndpointOptions, RpcEndpoint } from "./endpoint.ts";
export { controlSocketPath, MAX_SOCKET_PATH } from "./socket-path.ts";
export { RPC_SCHEMA_ID, rpcSchemaPath } from "./schema/mod.ts";
