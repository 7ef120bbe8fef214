/** A mistake in how the command was called: one line on stderr, exit code 2. */
export class UsageError extends Error {
  override name = "UsageError";
}
