// A bound on one step of a test: a step that never ends (a stop that waits on a teardown that
// never finishes, an idle() that never resolves) fails with what it was instead of hanging the file.

/** `work`'s result, or an error naming `what` once `ms` have passed without one. */
export async function within<T>(ms: number, what: string, work: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} did not end within ${ms}ms`)), ms);
  });
  try {
    return await Promise.race([work, late]);
  } finally {
    clearTimeout(timer);
  }
}
