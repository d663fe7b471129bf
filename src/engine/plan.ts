// Planning is pure: given what Git declares, what is live and how they compare, decide which
// objects to apply in which order, what to prune, and whether a guard refuses the whole sync.
// Executing the plan (API calls) lives in sync.ts, so every decision here has a table test.
import { type KubeObject, keyOf, keyString, kubectlName } from "../kube/object.ts";
import { isHookObject } from "./hooks/annotations.ts";
import { compareForSync, isFoundational, kindRank, waveOf } from "./order.ts";
import { resourceOptionsOf } from "./sync-options.ts";
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
  /**
   * The field validation a server-side dry run of this very body passed with while the drift was
   * confirmed (confirm-drift.ts): the dry run before the first write need not send it again.
   */
  dryRunPassed?: "Strict" | "Ignore";
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
  /** PruneLast: deleted after the last Sync wave, before PostSync. */
  last?: boolean;
  /** Why it stays although Git no longer declares it (Prune=false, Prune=confirm). */
  kept?: string;
}

/** Where a hook runs, so a Namespace or CRD it needs can be moved ahead of it. */
export interface Placement {
  phase: number;
  wave: number;
  obj: KubeObject;
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
  /** Prune objects marked Prune=confirm / Delete=confirm. */
  confirmPrune?: boolean;
  /** PruneLast for every prune (syncOptions.PruneLast). */
  pruneLast?: boolean;
  /** Hooks of this operation: a Namespace or CRD they need is hoisted ahead of them too. */
  hooks?: Placement[];
}

export interface Plan {
  steps: ApplyStep[];
  unchanged: ApplyTask[];
  prunes: PruneTask[];
  /** Managed objects Git no longer declares, left alone: prune is off, or Prune=false / Prune=confirm. */
  requiresPruning: PruneTask[];
  /** Not declared, prune off, and marked IgnoreExtraneous: they do not make the environment OutOfSync. */
  ignoredExtraneous?: PruneTask[];
  /** Set when a guard refuses the whole sync; nothing may be applied or deleted. */
  refusal?: string;
}

export function pruneBudget(limit: number | string | undefined, managed: number): number | undefined {
  if (limit === undefined) return undefined;
  if (typeof limit === "number") return limit;
  const pct = Number.parseFloat(limit);
  return Math.floor((managed * pct) / 100);
}

/** A Namespace or CRD is needed by objects in it, or of the kind it defines. */
function needs(dependant: KubeObject, foundation: KubeObject): boolean {
  if (foundation.kind === "Namespace") return dependant.metadata.namespace === foundation.metadata.name;
  const spec = (foundation as { spec?: { group?: string; names?: { kind?: string } } }).spec;
  const group = dependant.apiVersion.includes("/") ? dependant.apiVersion.split("/")[0] : "";
  return dependant.kind === spec?.names?.kind && group === spec?.group;
}

/**
 * Argo CD moves a Namespace or CRD declared later than its first dependant to that dependant's
 * phase and wave (across phases too: a PreSync hook in the app's new Namespace), so the sync does
 * not fail on an order Git got wrong. Everything else stays where its annotations put it.
 */
export function placements(desired: KubeObject[], hooks: Placement[] = []): Map<KubeObject, Placement> {
  const all: Placement[] = [...desired.map((obj) => ({ phase: 1, wave: waveOf(obj), obj })), ...hooks];
  const placed = new Map<KubeObject, Placement>();
  for (const p of all) placed.set(p.obj, p);
  for (const f of all.filter((p) => isFoundational(p.obj) && p.phase === 1)) {
    let first: Placement = f;
    for (const d of all)
      if (d !== f && needs(d.obj, f.obj) && (d.phase - first.phase || d.wave - first.wave) < 0) first = d;
    placed.set(f.obj, { phase: first.phase, wave: first.wave, obj: f.obj });
  }
  return placed;
}

function pruneTaskOf(key: string, live: KubeObject, input: PlanInput): PruneTask {
  const o = resourceOptionsOf(live);
  const task: PruneTask = { key, live, wave: waveOf(live) };
  if (o.pruneLast || input.pruneLast) task.last = true;
  if (o.prune === "false") task.kept = "Prune=false";
  else if (o.prune === "confirm" && !input.confirmPrune)
    task.kept = "Prune=confirm: waits for a sync with --confirm-prune";
  return task;
}

export function planSync(input: PlanInput): Plan {
  const desiredKeys = new Set(input.desired.map((o) => keyString(keyOf(o))));
  // Hooks a sync created (or, before hooks were operations, applied as managed) are never pruned.
  const managed = [...input.live.entries()].filter(
    ([, o]) => isManagedBy(o, input.instance) && !isHookObject(o),
  );
  const orphaned: PruneTask[] = managed
    .filter(([k]) => !desiredKeys.has(k))
    .map(([key, live]) => pruneTaskOf(key, live, input))
    // Reverse of the apply order: dependants go before what they depend on.
    .sort((a, b) => -compareForSync(a.live, b.live));
  const extraneous = (t: PruneTask) => !input.prune && resourceOptionsOf(t.live).ignoreExtraneous === true;

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
    prunes: input.prune ? orphaned.filter((t) => !t.kept) : [],
    requiresPruning: orphaned.filter((t) => (!input.prune || t.kept) && !extraneous(t)),
    ignoredExtraneous: orphaned.filter(extraneous),
  };

  if (input.desired.length === 0 && managed.length > 0 && !input.allowEmpty) {
    plan.refusal = `render produced 0 objects; refusing to prune ${managed.length} live object${
      managed.length === 1 ? "" : "s"
    } (set syncPolicy.automated.allowEmpty: true, or sync with --allow-empty, to allow an empty environment)`;
    return plan;
  }
  const shared = tasks.filter(
    (t) => t.sharedWith && (input.failOnSharedResource || resourceOptionsOf(t.obj).failOnSharedResource),
  );
  if (shared.length > 0) {
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

  const placed = placements(input.desired, input.hooks);
  const at = (t: ApplyTask) => placed.get(t.obj) ?? { phase: 1, wave: waveOf(t.obj), obj: t.obj };
  const changed = tasks
    .filter((t) => t.action !== "unchanged")
    .sort(
      (a, b) =>
        at(a).phase - at(b).phase ||
        at(a).wave - at(b).wave ||
        kindRank(a.obj.kind) - kindRank(b.obj.kind) ||
        compareForSync(a.obj, b.obj),
    );
  for (const task of changed) {
    const { phase, wave } = at(task);
    const foundational = isFoundational(task.obj);
    const last = plan.steps.at(-1);
    if (last && last.phase === phase && last.wave === wave && last.foundational === foundational)
      last.tasks.push(task);
    else plan.steps.push({ phase, wave, foundational, tasks: [task] });
  }
  return plan;
}
