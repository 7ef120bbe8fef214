// The shape check a parsed line passes before json-rpc-2.0 sees it (pure, plain data):
// json-rpc-2.0 threw on `null`, answered a numeric method as unknown, and echoed an object id.
import { describe, expect, it } from "vitest";
import { answerableId, requestShapeProblem } from "../../lib/rpc/request-shape.ts";

describe("requestShapeProblem", () => {
  it.each([
    [null, /JSON object, got null/],
    [42, /JSON object, got 42/],
    ["get", /JSON object, got "get"/],
    [true, /JSON object, got true/],
    [{ jsonrpc: "2.0", id: 1 }, /`method` must be a string, got none/],
    [{ jsonrpc: "2.0", id: 1, method: 7 }, /`method` must be a string, got 7/],
    [{ jsonrpc: "2.0", id: { a: 1 }, method: "list" }, /`id` must be a string, a number or null/],
    [{ jsonrpc: "2.0", id: [1], method: "list" }, /`id` must be/],
  ])("refuses %j", (value, problem) => {
    expect(requestShapeProblem(value)).toMatch(problem);
  });

  it.each([
    [{ jsonrpc: "2.0", id: 1, method: "list" }],
    [{ jsonrpc: "2.0", id: "a", method: "get", params: { id: "x" } }],
    [{ jsonrpc: "2.0", id: null, method: "list" }],
    [{ jsonrpc: "2.0", method: "list" }],
    // A batch: json-rpc-2.0 checks its members (and the endpoint answers one that makes it throw).
    [[{ jsonrpc: "2.0", id: 1, method: "list" }]],
    [[]],
  ])("leaves %j to json-rpc-2.0", (value) => {
    expect(requestShapeProblem(value)).toBeNull();
  });

  it("answers with the request's own id when it is one, else null", () => {
    expect(answerableId({ id: 7, method: 7 })).toBe(7);
    expect(answerableId({ id: "r-1" })).toBe("r-1");
    expect(answerableId({ id: { a: 1 } })).toBeNull();
    expect(answerableId(null)).toBeNull();
    expect(answerableId([{ id: 1 }])).toBeNull();
  });
});
