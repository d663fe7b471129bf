// Planning is pure: given what Git declares, what is live and how they compare, decide which
// objects to apply in which order, what to prune, and whether a guard refuses the whole sync.
// Executing the plan (API calls) lives in sync.ts, so every decision here has a table test.
import { type KubeObject, keyOf, keyString, kubectlName } from "../kube/object.ts";
import { compareForSync, isFoundational, isSyncFailHook, phaseOf, waveOf } from "./order.ts";
import { HASH_ANNOTATION, isManagedBy, managingInstance } from "./tracking.ts";

export interface ObjectComparison {
  inSync: boolean;
  /** JSON pointers that differ. */
  paths: string[];
  /** A list Git declares has an item only live has (an added sidecar): drift a dry run cannot clear. */
  extraItems?: boolean;
}

export type TaskAction = "create" | "update" | "unchanged";

export interface ApplyTask {
  key: string;
  obj: KubeObject;
  live?: KubeObject;
  action: TaskAction;
  drifted: string[];
  /** Git declares something else than what was last applied (the applied hash differs). */
  gitChanged?: boolean;
  extraItems?: boolean;
  /** Managed by another environment before this sync (shared resource). */
  sharedWith?: string;
  /** Why syncward may not touch it (forbidden by RBAC): the task fails without a request. */
  denied?: string;
}

export interface ApplyStep {
  /** Argo CD's sync phase: 0 PreSync, 1 Sync, 2 PostSync. */
  phase: number;
  wave: number;
  /** Namespaces and CRDs: applied and waited for (established) before the rest of their wave. */
  foundational: boolean;
  tasks: ApplyTask[];
}

export interface PruneTask {
  key: string;
  live: KubeObject;
  wave: number;
}

export interface PlanInput {
  instance: string;
  desired: KubeObject[];
  /** Live objects by keyString: every desired object that exists, and every object managed by this instance. */
  live: Map<string, KubeObject>;
  compare: (desired: KubeObject, live: KubeObject) => ObjectComparison;
  prune: boolean;
  allowEmpty: boolean;
  failOnSharedResource: boolean;
  /** A count, or "N%" of the managed objects. */
  pruneLimit?: number | string;
  overridePruneLimit?: boolean;
}

export interface Plan {
  steps: ApplyStep[];
  unchanged: ApplyTask[];
  prunes: PruneTask[];
  /** Managed objects Git no longer declares, left alone because prune is off. */
  requiresPruning: PruneTask[];
  /** SyncFail hooks: applied only when the sync fails. */
  onFail: ApplyTask[];
  /** Set when a guard refuses the whole sync; nothing may be applied or deleted. */
  refusal?: string;
}

export function pruneBudget(limit: number | string | undefined, managed: number): number | undefined {
  if (limit === undefined) return undefined;
  if (typeof limit === "number") return limit;
  const pct = Number.parseFloat(limit);
  return Math.floor((managed * pct) / 100);
}

export function planSync(input: PlanInput): Plan {
  const desiredKeys = new Set(input.desired.map((o) => keyString(keyOf(o))));
  const managed = [...input.live.entries()].filter(([, o]) => isManagedBy(o, input.instance));
  const orphaned: PruneTask[] = managed
    .filter(([k]) => !desiredKeys.has(k))
    .map(([key, live]) => ({ key, live, wave: waveOf(live) }))
    // Reverse of the apply order: dependants go before what they depend on.
    .sort((a, b) => -compareForSync(a.live, b.live));

  const tasks: ApplyTask[] = input.desired.map((obj) => {
    const key = keyString(keyOf(obj));
    const live = input.live.get(key);
    if (!live) return { key, obj, action: "create", drifted: [] };
    const other = managingInstance(live);
    const sharedWith = other && other !== input.instance ? other : undefined;
    const sameHash =
      live.metadata.annotations?.[HASH_ANNOTATION] === obj.metadata.annotations?.[HASH_ANNOTATION];
    const cmp = input.compare(obj, live);
    const inSync = sameHash && cmp.inSync && !sharedWith;
    return {
      key,
      obj,
      live,
      action: inSync ? "unchanged" : "update",
      drifted: cmp.paths,
      gitChanged: !sameHash,
      extraItems: cmp.extraItems,
      sharedWith,
    };
  });

  const plan: Plan = {
    steps: [],
    unchanged: tasks.filter((t) => t.action === "unchanged"),
    prunes: input.prune ? orphaned : [],
    onFail: [],
    requiresPruning: input.prune ? [] : orphaned,
  };

  if (input.desired.length === 0 && managed.length > 0 && !input.allowEmpty) {
    plan.refusal = `render produced 0 objects; refusing to prune ${managed.length} live object${
      managed.length === 1 ? "" : "s"
    } (set syncPolicy.automated.allowEmpty: true to allow an empty environment)`;
    return plan;
  }
  const shared = tasks.filter((t) => t.sharedWith);
  if (input.failOnSharedResource && shared.length > 0) {
    plan.refusal = `FailOnSharedResource: ${shared
      .map((t) => `${kubectlName(keyOf(t.obj))} is managed by ${t.sharedWith}`)
      .join("; ")}`;
    return plan;
  }
  const budget = pruneBudget(input.pruneLimit, managed.length);
  if (budget !== undefined && plan.prunes.length > budget && !input.overridePruneLimit) {
    plan.refusal = `prune limit: this sync would delete ${plan.prunes.length} objects, more than the limit of ${budget} (syncPolicy.pruneLimit: ${input.pruneLimit}); sync again with an explicit override to proceed`;
    return plan;
  }

  const changed = tasks.filter((t) => t.action !== "unchanged").sort((a, b) => compareForSync(a.obj, b.obj));
  plan.onFail = changed.filter((t) => isSyncFailHook(t.obj));
  for (const task of changed.filter((t) => !isSyncFailHook(t.obj))) {
    const phase = phaseOf(task.obj);
    const wave = waveOf(task.obj);
    const foundational = isFoundational(task.obj);
    const last = plan.steps.at(-1);
    if (last && last.phase === phase && last.wave === wave && last.foundational === foundational)
      last.tasks.push(task);
    else plan.steps.push({ phase, wave, foundational, tasks: [task] });
  }
  return plan;
}
