// What one sync attempt carries through its phases (sync.ts): the guarded client every write goes
// through, the request with its defaults, and the per-object results and totals each phase adds
// to. `finish` turns them into the outcome, whichever phase ends the sync.
import type { KubeClient } from "../../kube/client.ts";
import type { KindRef } from "../live.ts";
import { guardWrites, reservedPlaces } from "../reserved.ts";
import { emptyTotals } from "../resource-results.ts";
import type { ResourceResult, SyncResult } from "../result.ts";
import type { SyncOutcome, SyncRequest, SyncTarget } from "../types.ts";

export interface SyncRun {
  /** The one choke point: every write (apply, hooks, prune) goes through this view. */
  readonly client: KubeClient;
  readonly target: SyncTarget;
  readonly request: SyncRequest;
  readonly startedAt: string;
  readonly totals: SyncResult["totals"];
  readonly resources: ResourceResult[];
  readonly writesBefore: number;
  /** Fingerprint of the hooks the assessment found (hooksDigestOf), once it has run. */
  hooksDigest?: string;
}

export function startRun(unguarded: KubeClient, target: SyncTarget, given: SyncRequest): SyncRun {
  const client = guardWrites(unguarded, reservedPlaces(target.reservedNamespaces));
  const request = { ...given, healthTimeoutMs: given.healthTimeoutMs ?? target.env.syncPolicy.healthTimeout };
  return {
    client,
    target,
    request,
    startedAt: new Date().toISOString(),
    totals: emptyTotals(),
    resources: [],
    writesBefore: client.counts.writes,
  };
}

export function finish(
  run: SyncRun,
  phase: SyncResult["phase"],
  message: string,
  retryable = false,
  inventory: KindRef[] = [],
): SyncOutcome {
  return {
    revision: run.request.revision,
    phase,
    message,
    resources: run.resources,
    startedAt: run.startedAt,
    finishedAt: new Date().toISOString(),
    totals: run.totals,
    writes: run.client.counts.writes - run.writesBefore,
    dryRun: run.request.dryRun ?? false,
    inventory,
    retryable,
    hooksDigest: run.hooksDigest,
  };
}
