// Small helpers every verb of the engine uses to build its part of the result.
import { describeForbidden, KubeApiError } from "../kube/errors.ts";
import { type KubeObject, keyOf, keyString, kubectlName } from "../kube/object.ts";
import type { ApplyTask } from "./plan.ts";
import type { ResourceResult, SyncResult } from "./result.ts";
import type { SyncOutcome } from "./types.ts";

export const emptyTotals = () => ({
  created: 0,
  configured: 0,
  unchanged: 0,
  pruned: 0,
  failed: 0,
  skipped: 0,
});

export function resourceOf(
  obj: KubeObject,
  fields: Omit<ResourceResult, "group" | "kind" | "namespace" | "name">,
): ResourceResult {
  const k = keyOf(obj);
  return { group: k.group, kind: k.kind, namespace: k.namespace, name: k.name, ...fields };
}

/** ` (path/file.yaml:12)` when the caller knows where the object is declared, else "". */
export function originOf(origins: Map<string, string> | undefined, obj: KubeObject): string {
  const key = keyOf(obj);
  const origin = origins?.get(keyString(key)) ?? origins?.get(keyString({ ...key, namespace: "" }));
  return origin ? ` (${origin})` : "";
}

export function errorMessage(err: unknown): string {
  // Written as a project's ServiceAccount: the API server's words and what to grant it, whole.
  if (err instanceof KubeApiError && err.impersonatedAs) return err.message;
  const forbidden = describeForbidden(err);
  if (forbidden) return `${forbidden}; grant it in syncward's RBAC (deploy/) if syncward should manage it`;
  if (err instanceof KubeApiError && err.immutableField) {
    return `${err.message} (immutable field: sync with --force, or set the Replace=true sync option, to delete and recreate it)`;
  }
  return err instanceof Error ? err.message : String(err);
}

export function skipAll(tasks: ApplyTask[], why: string, resources: ResourceResult[]): void {
  for (const t of tasks) {
    resources.push(
      resourceOf(t.obj, {
        status: "OutOfSync",
        action: "skipped",
        message: `${kubectlName(keyOf(t.obj))} not applied: ${why}`,
      }),
    );
  }
}

/** The outcome of an operation that stopped before touching the cluster (a render error, a refusal). */
export function outcomeWithoutWork(
  revision: string,
  phase: SyncResult["phase"],
  message: string,
  dryRun = false,
): SyncOutcome {
  const now = new Date().toISOString();
  return {
    revision,
    phase,
    message,
    resources: [],
    startedAt: now,
    finishedAt: now,
    totals: emptyTotals(),
    writes: 0,
    dryRun,
    inventory: [],
    retryable: false,
  };
}
