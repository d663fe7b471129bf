// A process that cannot start says why in one line on stderr, with the fix, and exits 1: no stack
// trace, no library's internal message for a reader to decode (`kubectl logs` shows only this).

/** One line: the error's message with its line breaks folded, and its cause's if it has one. */
export function startupFailure(err: unknown): string {
  const message = err instanceof Error ? err.message : String(err);
  const cause = err instanceof Error && err.cause instanceof Error ? ` (${err.cause.message})` : "";
  return `syncward could not start: ${`${message}${cause}`.replace(/\s*\n\s*/g, " ").trim()}`;
}
