// Between the render and the gate: the environment's state, read again so the gate and the sync
// see what this attempt runs on (approvals, inventory, hooks digest), not what the first one saw.
import { errorMessage } from "../../engine/resource-results.ts";
import { outcomeWithoutWork, type SyncOutcome } from "../../engine/sync.ts";
import { isTransient, KubeApiError } from "../../kube/errors.ts";
import type { Release } from "./release.ts";

/**
 * The state lives in syncward's own namespace, which deploy/ grants: a 403 there comes from an API
 * server that has just started and not yet loaded its RBAC (it answers before its informers sync,
 * kubernetes#101422), so it is retried like an outage.
 */
export function stateReadFailure(err: unknown, revision: string, dryRun: boolean | undefined): SyncOutcome {
  const startingUp = err instanceof KubeApiError && err.forbidden;
  return {
    ...outcomeWithoutWork(
      revision,
      "Failed",
      `reading the environment's state failed: ${errorMessage(err)}`,
      dryRun,
    ),
    retryable: isTransient(err) || startingUp,
  };
}

/** Sets `r.state`; the outcome when it could not be read. */
export async function readState(r: Release, revision: string): Promise<SyncOutcome | undefined> {
  try {
    r.state = await r.fx.o.store.load(r.fx.instance);
    return undefined;
  } catch (err) {
    return stateReadFailure(err, revision, r.opts.dryRun);
  }
}
