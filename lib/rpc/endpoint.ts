import { createJSONRPCErrorResponse, JSONRPCClient, type JSONRPCResponse, JSONRPCServer } from "json-rpc-2.0";
import { LineSplitter } from "./lines.ts";
import { fromRpcError, RPC_ERRORS, RpcError, toRpcError } from "./protocol.ts";
import { answerableId, requestShapeProblem } from "./request-shape.ts";

/** The two ends of a byte channel: a child's stdio, a socket. */
export interface Channel {
  input: { on(event: "data", fn: (chunk: Uint8Array) => void): unknown; on(event: "end" | "close", fn: () => void): unknown };
  output: { write(data: string, done: (error?: Error | null) => void): unknown; end(): unknown };
}

export interface EndpointOptions {
  /** The methods this end answers (a server's, or a client's notifications); others get -32601. */
  methods: readonly string[];
  /** Carries a method out; what it throws becomes the error object (see toRpcError). */
  handle(method: string, params: unknown): Promise<unknown>;
  /** Longest request line taken (bytes); longer ones are answered -32600 and skipped. */
  maxLineBytes: number;
  /** Whether requests wait for `initialize` first (a server's end); a client's end answers at once. */
  requireInitialize: boolean;
  /** Told once, when the peer went away or close() was called. */
  onClose?(): void;
}

/**
 * One JSON-RPC 2.0 peer on a line-framed channel, either way round: it
 * answers the requests the other side sends (json-rpc-2.0's server, which
 * answers malformed and unknown requests itself) and sends its own (its
 * client). Lines come through outlive's bounded splitter. Every line
 * written goes in order, and `notify` resolves once its line was handed to
 * the channel, so a sender can pace itself by the reader (flow control).
 */
export class RpcEndpoint {
  // Errors are the peer's answer, not the server's log: json-rpc-2.0 would print each to the console.
  private readonly server = new JSONRPCServer({ errorListener: () => {} });
  private readonly client: JSONRPCClient;
  private readonly splitter: LineSplitter;
  /** Set when an initialize line is read, so requests behind it wait for its answer rather than being refused. */
  private initializing: Promise<void> | null = null;
  private settleInitialize: (() => void) | null = null;
  private initialized = false;
  private closed = false;

  constructor(private readonly channel: Channel, private readonly options: EndpointOptions) {
    this.splitter = new LineSplitter(options.maxLineBytes);
    this.client = new JSONRPCClient(async (payload) => {
      await this.send(payload);
    });
    this.server.mapErrorToJSONRPCErrorResponse = (id, error) => {
      const rpc = toRpcError(error);
      return createJSONRPCErrorResponse(id, rpc.code, rpc.message, rpc.data);
    };
    for (const method of options.methods) this.server.addMethod(method, (params) => this.call(method, params));
    if (!options.requireInitialize) this.initialized = true;
    channel.input.on("data", (chunk) => this.receive(chunk));
    channel.input.on("end", () => this.close());
    channel.input.on("close", () => this.close());
  }

  get isClosed(): boolean {
    return this.closed;
  }

  /** Sends a request and resolves with its result; rejects with the error object as an Error (fromRpcError). */
  async request(method: string, params?: unknown): Promise<unknown> {
    if (this.closed) throw new RpcError(RPC_ERRORS.outlive, "the connection is closed", { code: "E_CLOSED" });
    const response: JSONRPCResponse = await this.client.requestAdvanced({ jsonrpc: "2.0", id: this.nextId++, method, params });
    if (response.error) throw fromRpcError(response.error);
    return response.result;
  }

  /** Sends a notification; resolves once its line was handed to the channel (false when closed). */
  notify(method: string, params: unknown): Promise<boolean> {
    return this.send({ jsonrpc: "2.0", method, params });
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.client.rejectAllPendingRequests("the connection closed");
    try {
      this.channel.output.end();
    } catch {
      // Already gone.
    }
    this.options.onClose?.();
  }

  private nextId = 1;

  private async call(method: string, params: unknown): Promise<unknown> {
    if (method === "initialize" && this.options.requireInitialize) {
      if (this.initialized) throw new RpcError(RPC_ERRORS.invalidRequest, "initialize was already called on this connection");
      const settle = this.settleInitialize;
      try {
        const result = await this.options.handle(method, params);
        this.initialized = true;
        return result;
      } finally {
        if (!this.initialized) this.initializing = null;
        settle?.();
      }
    }
    if (this.initializing !== null) await this.initializing;
    if (!this.initialized) {
      throw new RpcError(RPC_ERRORS.notInitialized, `call initialize first (the server is not initialized; ${method} was not carried out)`, { code: "E_NOT_INITIALIZED" });
    }
    return this.options.handle(method, params);
  }

  private receive(chunk: Uint8Array): void {
    for (const event of this.splitter.push(chunk)) {
      if ("overlong" in event) {
        void this.send(createJSONRPCErrorResponse(null, RPC_ERRORS.invalidRequest, `the request line is ${event.overlong} bytes, longer than the ${this.options.maxLineBytes} this server takes; it was skipped`));
        continue;
      }
      let value: unknown;
      try {
        value = JSON.parse(event.line);
      } catch (error) {
        void this.send(createJSONRPCErrorResponse(null, RPC_ERRORS.parse, `Parse error: the line is not JSON (${(error as Error).message})`));
        continue;
      }
      if (isResponse(value)) {
        this.client.receive(value);
        continue;
      }
      const problem = requestShapeProblem(value);
      if (problem) {
        void this.send(createJSONRPCErrorResponse(answerableId(value), RPC_ERRORS.invalidRequest, `Invalid Request: ${problem}`));
        continue;
      }
      // json-rpc-2.0 says only "Method not found"; the answer names the method and the ones there are (a notification gets none).
      const method = (value as { method?: string }).method;
      if (method !== undefined && "id" in (value as object) && !this.server.hasMethod(method)) {
        void this.send(createJSONRPCErrorResponse(answerableId(value), RPC_ERRORS.methodNotFound,
          `Method not found: ${JSON.stringify(method)} (the methods are ${this.options.methods.join(", ")})`));
        continue;
      }
      // Seen here, in line order: requests sent right behind initialize are taken, not refused.
      if (!this.initialized && this.initializing === null && isInitialize(value)) {
        this.initializing = new Promise((resolve) => (this.settleInitialize = resolve));
      }
      void Promise.resolve(this.server.receive(value as never)).then((answer) => {
        if (answer !== null && !(Array.isArray(answer) && answer.length === 0)) return this.send(answer);
      }, () => this.send(createJSONRPCErrorResponse(null, RPC_ERRORS.invalidRequest, "Invalid Request: the batch holds a member that is not a request object")));
    }
  }

  private send(payload: unknown): Promise<boolean> {
    if (this.closed) return Promise.resolve(false);
    const line = `${JSON.stringify(payload)}\n`;
    return new Promise((resolve) => {
      try {
        this.channel.output.write(line, (error) => resolve(!error));
      } catch {
        resolve(false);
      }
    });
  }
}

function isResponse(value: unknown): value is JSONRPCResponse {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return false;
  const v = value as Record<string, unknown>;
  return v.jsonrpc === "2.0" && !("method" in v) && "id" in v && ("result" in v || "error" in v);
}

function isInitialize(value: unknown): boolean {
  return typeof value === "object" && value !== null && (value as { method?: unknown }).method === "initialize";
}
