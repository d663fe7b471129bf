// Phase 2 of a sync, pure: what this sync does with its assessment. The objects it applies (all,
// or `only` those named), the hooks it runs (hooks belong to a release: every explicit sync, a new
// revision only when it changes something, never a self-heal), the kinds it keeps in inventory,
// and the sync options it cannot honour.
import { type KubeObject, keyOf, keyString, kubectlName } from "../../kube/object.ts";
import type { Assessment } from "../assess.ts";
import type { HookTask } from "../hooks/plan.ts";
import type { KindRef } from "../live.ts";
import type { ApplyTask, Plan } from "../plan.ts";
import { resourceOptionsOf } from "../sync-options.ts";
import type { HookMode, SyncRequest } from "../types.ts";

export interface SyncScope {
  plan: Plan;
  /** The tasks this sync applies. */
  pending: ApplyTask[];
  /** Tasks applied plus objects pruned. */
  changes: number;
  /** Hooks run around the waves (PreSync, Sync, PostSync). */
  hooks: HookTask[];
  /** SyncFail hooks, run when the sync fails. */
  onFailure: HookTask[];
  /** The inventory after a sync that got to write. */
  inventory: KindRef[];
  /** "kind/name: option" per object whose sync options syncward does not honour. */
  unknown: string[];
}

export function scopeOf(
  assessment: Assessment,
  request: Pick<SyncRequest, "only" | "hooks" | "hooksDigest" | "inventory">,
  assessedDigest: string | undefined,
): SyncScope {
  const { plan, tracked } = assessment;
  // A kind syncward may not even read stays out of the inventory: it applied nothing of it.
  const inventory = mergeInventory(
    request.inventory ?? [],
    tracked.filter((o) => !assessment.denied.has(keyString(keyOf(o)))),
  );
  const pending = plan.steps.flatMap((s) => s.tasks).filter((t) => !request.only || request.only.has(t.key));
  const changes = pending.length + plan.prunes.length;
  const mode: HookMode = request.only ? "never" : (request.hooks ?? "always");
  // A revision that changes only a hook (a new migration) changes the release: its hooks run too.
  const hooksChanged = request.hooksDigest !== undefined && request.hooksDigest !== assessedDigest;
  const runs = mode === "always" || (mode === "ifChanged" && (changes > 0 || hooksChanged));
  const hooks = runs ? assessment.hooks.filter((h) => h.phase !== "SyncFail") : [];
  const onFailure = mode === "never" ? [] : assessment.hooks.filter((h) => h.phase === "SyncFail");
  return { plan, pending, changes, hooks, onFailure, inventory, unknown: unknownOptions(tracked) };
}

/** A message with the sync options not honoured, if any, appended. */
export function withNotes(scope: Pick<SyncScope, "unknown">, message: string): string {
  return scope.unknown.length > 0
    ? `${message}; sync options not honoured: ${scope.unknown.join("; ")}`
    : message;
}

function unknownOptions(objects: KubeObject[]): string[] {
  return objects.flatMap((o) => {
    const { unknown } = resourceOptionsOf(o);
    return unknown.length > 0 ? [`${kubectlName(keyOf(o))}: ${unknown.join(", ")}`] : [];
  });
}

export function mergeInventory(previous: KindRef[], tracked: KubeObject[]): KindRef[] {
  const kinds = new Map<string, KindRef>();
  for (const k of [...previous, ...tracked.map((o) => ({ apiVersion: o.apiVersion, kind: o.kind }))]) {
    kinds.set(`${k.apiVersion}|${k.kind}`, { apiVersion: k.apiVersion, kind: k.kind });
  }
  return [...kinds.values()];
}
