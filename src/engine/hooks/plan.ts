// Separating the hooks of a render from the resources it declares, one task per phase a hook
// names. Pure: what runs when is decided here, and running it lives in run.ts.
import { createHash } from "node:crypto";
import { groupOf, type KubeObject } from "../../kube/object.ts";
import { type DeletePolicy, type HookPhase, PHASE_ORDER, roleOf } from "./annotations.ts";

/** Marks an object a sync created as a hook, naming the environment it ran for. */
export const HOOK_OF_LABEL = "syncward.dev/hook-of";
/** Which declared hook an object was created from: how a generateName hook is found again. */
export const HOOK_ID_LABEL = "syncward.dev/hook-id";

export interface HookTask {
  /** Stable across syncs: a hash of kind, namespace and name (or generateName). */
  id: string;
  phase: HookPhase;
  wave: number;
  policies: DeletePolicy[];
  /** As declared (namespace defaulted); without metadata.name when it uses generateName. */
  obj: KubeObject;
  /** `job.batch/migrate` or `job.batch/migrate-*`, for messages. */
  display: string;
}

export interface SkippedObject {
  obj: KubeObject;
  reason: string;
}

export interface HookSplit {
  resources: KubeObject[];
  hooks: HookTask[];
  skipped: SkippedObject[];
}

export function hookIdOf(obj: KubeObject): string {
  const name = obj.metadata.name || `${obj.metadata.generateName ?? ""}*`;
  const identity = `${groupOf(obj.apiVersion)}/${obj.kind}:${obj.metadata.namespace ?? ""}/${name}`;
  return createHash("sha256").update(identity).digest("hex").slice(0, 20);
}

export function hookDisplay(obj: KubeObject): string {
  const group = groupOf(obj.apiVersion);
  const kind = obj.kind.toLowerCase();
  const name = obj.metadata.name || `${obj.metadata.generateName ?? ""}*`;
  return `${group ? `${kind}.${group}` : kind}/${name}`;
}

export function splitHooks(objects: KubeObject[]): HookSplit {
  const split: HookSplit = { resources: [], hooks: [], skipped: [] };
  for (const obj of objects) {
    const role = roleOf(obj);
    if (role.role === "resource") split.resources.push(obj);
    else if (role.role === "skip") split.skipped.push({ obj, reason: role.reason });
    else
      for (const phase of role.spec.phases)
        split.hooks.push({
          id: hookIdOf(obj),
          phase,
          wave: role.spec.wave,
          policies: role.spec.policies,
          obj,
          display: hookDisplay(obj),
        });
  }
  split.hooks.sort(
    (a, b) =>
      PHASE_ORDER[a.phase] - PHASE_ORDER[b.phase] || a.wave - b.wave || a.display.localeCompare(b.display),
  );
  return split;
}

/** A generateName object is valid only as a hook: Argo CD cannot track what it cannot name. */
export function generateNameProblem(obj: KubeObject): string | undefined {
  if (obj.metadata.name || !obj.metadata.generateName) return undefined;
  return roleOf(obj).role === "hook"
    ? undefined
    : "metadata.generateName is only supported on hooks (argocd.argoproj.io/hook); a managed object needs metadata.name";
}
