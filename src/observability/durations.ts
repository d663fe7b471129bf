// How long the work that matters to an operator takes: a reconcile pass, a render, a source fetch,
// a webhook's handling. Published on a diagnostics channel (node:diagnostics_channel) rather than
// passed down as a dependency: the reconciler and the source layer time their own steps with one
// call and know nothing of metrics, and with no subscriber (the CLI) a timing costs a clock read.
// The metrics subscribe (metrics.ts). Process-wide, like the process metrics.
import { channel } from "node:diagnostics_channel";

export type Timing =
  | { kind: "reconcile" | "render" | "fetch"; instance: string; env: string; seconds: number }
  | { kind: "webhook"; event: string; seconds: number };

const durations = channel("syncward:duration");

/** Tells the subscribers how long one piece of work took. */
export function reportDuration(timing: Timing): void {
  if (durations.hasSubscribers) durations.publish(timing);
}

type Labels<T> = T extends unknown ? Omit<T, "seconds"> : never;

/** Runs `work` and reports its duration, whether it succeeds or throws. */
export async function timed<T>(labels: Labels<Timing>, work: () => Promise<T>): Promise<T> {
  const started = performance.now();
  try {
    return await work();
  } finally {
    reportDuration({ ...labels, seconds: (performance.now() - started) / 1000 } as Timing);
  }
}

/** Calls `observe` with every timing reported from now on; returns the unsubscribe. */
export function onDuration(observe: (timing: Timing) => void): () => void {
  const listener = (message: unknown) => observe(message as Timing);
  durations.subscribe(listener);
  return () => durations.unsubscribe(listener);
}
