// A session with a storage: hold it (open the supervisor) or be its holder's client, and take it over when
// the holder goes. `outlive serve` and `outlive mcp` build on it; it sits above the supervisor.
export { openSession, type Session, type SessionOptions } from "./session.ts";
