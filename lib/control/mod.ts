export { askHolder, NO_HOLDER } from "./client.ts";
export { CONTROL_OPS, type ControlOp, controlSocketPath, parseRequest } from "./protocol.ts";
