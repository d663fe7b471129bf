// Subscribing handlers to webhook events with the cross-cutting rules every handler needs:
// duplicate deliveries are ignored, and the installation client is passed in.
import type { Probot } from "probot";
import { timed } from "../observability/durations.ts";
import type { Octokit } from "./octokit.ts";

export interface Metrics {
  countGitHubRequest(method: string, status: number | string): void;
  /** From a response's x-ratelimit-remaining and x-ratelimit-limit headers. */
  githubRateLimit?(remaining: number, limit: number): void;
  /** How many recorded previews are being torn down (preview-manager.ts's sweep). */
  previewTeardownsPending?(count: number): void;
}

type EventName = Parameters<Probot["on"]>[0];

const counted = new WeakSet<object>();

/**
 * Counts an Octokit's requests in the metrics, once per instance (Probot may reuse instances):
 * answers through the `after` hook, failures (4xx, 5xx, no response at all) through `error`,
 * which rethrows so the caller sees the failure unchanged.
 */
export function countRequests<T extends Octokit>(gh: T, metrics?: Metrics): T {
  if (metrics && !counted.has(gh)) {
    counted.add(gh);
    gh.hook.after("request", (response, options) => {
      metrics.countGitHubRequest(String(options.method), response.status);
      const remaining = Number(response.headers["x-ratelimit-remaining"]);
      const limit = Number(response.headers["x-ratelimit-limit"]);
      if (response.headers["x-ratelimit-limit"] !== undefined && Number.isFinite(remaining) && limit > 0)
        metrics.githubRateLimit?.(remaining, limit);
    });
    gh.hook.error("request", (error, options) => {
      const status = (error as { status?: unknown }).status;
      metrics.countGitHubRequest(
        String(options.method),
        typeof status === "number" && status > 0 ? status : "error",
      );
      throw error;
    });
  }
  return gh;
}

export function handleEvent(
  app: Probot,
  deliveries: { first(id: string): boolean },
  metrics?: Metrics,
  stopping: () => boolean = () => false,
) {
  return (
    events: EventName,
    handler: (gh: Octokit, payload: Record<string, unknown>) => Promise<unknown>,
  ) => {
    const handle = async (context: Parameters<Parameters<Probot["on"]>[1]>[0]) => {
      // A stopping replica starts nothing new (its Leases are being released): the delivery fails,
      // GitHub shows it for redelivery, and the replica that takes the app over polls the branch.
      if (stopping())
        throw new Error(`syncward is stopping: delivery ${context.id} refused; redeliver it from GitHub`);
      if (!deliveries.first(context.id)) {
        context.log.info({ delivery: context.id, event: context.name }, "duplicate delivery ignored");
        return;
      }
      const gh = countRequests(context.octokit as unknown as Octokit, metrics);
      await handler(gh, context.payload as unknown as Record<string, unknown>);
    };
    // Timed whatever becomes of the delivery: refused, a duplicate, handled or failed.
    app.on(events, (context) => timed({ kind: "webhook", event: context.name }, () => handle(context)));
  };
}
