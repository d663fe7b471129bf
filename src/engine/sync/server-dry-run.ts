// Phase 4 of a sync that writes: every object and hook it would write, tried first as a
// server-side dry run. One the API server rejects stops the sync before any write.
import { keyOf, kubectlName } from "../../kube/object.ts";
import { dryRunAll } from "../dry-run.ts";
import { errorMessage, originOf, resourceOf, skipAll } from "../resource-results.ts";
import type { SyncOutcome } from "../types.ts";
import { finish, type SyncRun } from "./run.ts";
import type { SyncScope } from "./scope.ts";

/** The outcome when something was rejected; undefined when the sync may write. */
export async function serverDryRunPhase(run: SyncRun, scope: SyncScope): Promise<SyncOutcome | undefined> {
  const { client, target, request, resources, totals } = run;
  const { pending, hooks, onFailure } = scope;
  const rejected = await dryRunAll(client, target, request, pending, [...hooks, ...onFailure]).catch(
    (err) => [{ obj: undefined, message: errorMessage(err) }],
  );
  if (rejected.length === 0) return undefined;
  for (const r of rejected)
    if (r.obj)
      resources.push(
        resourceOf(r.obj, {
          status: "Failed",
          action: "failed",
          message: `${kubectlName(keyOf(r.obj))}${originOf(request.origins, r.obj)} failed a dry run: ${r.message}`,
        }),
      );
  totals.failed += rejected.length;
  skipAll(
    pending.filter((t) => !rejected.some((r) => r.obj === t.obj)),
    "the dry run of this sync failed; nothing was written",
    resources,
  );
  return finish(
    run,
    "Failed",
    `dry run failed before any write, nothing changed: ${rejected
      .map((r) =>
        r.obj ? `${kubectlName(keyOf(r.obj))}${originOf(request.origins, r.obj)}: ${r.message}` : r.message,
      )
      .join("; ")}`,
    false,
    request.inventory ?? [],
  );
}
