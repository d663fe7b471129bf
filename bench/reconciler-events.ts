// Waiting on the reconciler's events (emitted to a set of listeners the benchmark owns), with a
// timestamp taken the moment the event arrives.
import { performance } from "node:perf_hooks";
import type { ReconcilerEvent } from "../src/reconciler/events.ts";

export type Listeners = Set<(e: ReconcilerEvent) => void>;

/** Resolves with the first event matching `match` from now on, and performance.now() at its arrival. */
export function nextEvent(
  listeners: Listeners,
  match: (e: ReconcilerEvent) => boolean,
  timeoutMs: number,
): Promise<{ event: ReconcilerEvent; at: number }> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      listeners.delete(listener);
      reject(new Error(`no matching reconciler event within ${timeoutMs} ms`));
    }, timeoutMs);
    const listener = (event: ReconcilerEvent) => {
      if (!match(event)) return;
      clearTimeout(timer);
      listeners.delete(listener);
      resolve({ event, at: performance.now() });
    };
    listeners.add(listener);
  });
}

/** Tells every listener; the copy lets a listener remove itself while being told. */
export function emitTo(listeners: Listeners): (e: ReconcilerEvent) => void {
  return (e) => {
    for (const l of [...listeners]) l(e);
  };
}
