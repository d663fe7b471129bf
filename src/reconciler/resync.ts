// How long an idle environment may go without reading the cluster in full. Between full passes, a
// poll that finds the same commit, the same config and watches that stayed connected without an
// event reads nothing from the API server: the watches stand for the cluster, as Argo CD's cluster
// cache does between its own full resyncs (24 hours by default). The full pass catches anything a
// watch could miss without telling (an API server that lost an event, a bug).
import { parseDuration } from "../config/duration.ts";

export const DEFAULT_RESYNC_MS = 24 * 3_600_000;

/** SYNCWARD_RESYNC_INTERVAL as milliseconds (a Go-style duration such as 24h or 30m), or the default. */
export function resyncIntervalMs(env: Record<string, string | undefined> = process.env): number {
  const text = env.SYNCWARD_RESYNC_INTERVAL;
  if (text === undefined || text === "") return DEFAULT_RESYNC_MS;
  const ms = parseDuration(text);
  if (ms === undefined || ms <= 0)
    throw new Error(
      `SYNCWARD_RESYNC_INTERVAL: "${text}" is not a positive duration (write it like 24h, 90m or 30s)`,
    );
  return ms;
}
