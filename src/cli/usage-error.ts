/** A mistake in how syncward was called or configured: exit code 2, one line, nothing changed. */
export class UsageError extends Error {}
