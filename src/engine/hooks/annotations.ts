// What an object's annotations make of it: a resource syncward manages, a hook that runs during a
// sync operation, or something never applied. Argo CD's own annotations first; a chart's Helm hook
// annotations are read only when there is no Argo CD one, mapped the way Argo CD maps them.
import type { KubeObject } from "../../kube/object.ts";

export const HOOK_ANNOTATION = "argocd.argoproj.io/hook";
export const HOOK_DELETE_POLICY_ANNOTATION = "argocd.argoproj.io/hook-delete-policy";
export const WAVE_ANNOTATION = "argocd.argoproj.io/sync-wave";
export const HELM_HOOK_ANNOTATION = "helm.sh/hook";
export const HELM_WEIGHT_ANNOTATION = "helm.sh/hook-weight";
export const HELM_DELETE_POLICY_ANNOTATION = "helm.sh/hook-delete-policy";

export type HookPhase = "PreSync" | "Sync" | "PostSync" | "SyncFail";
export type DeletePolicy = "BeforeHookCreation" | "HookSucceeded" | "HookFailed";

export const PHASE_ORDER: Record<HookPhase, number> = { PreSync: 0, Sync: 1, PostSync: 2, SyncFail: 3 };

export interface HookSpec {
  phases: HookPhase[];
  wave: number;
  policies: DeletePolicy[];
}

export type Role =
  | { role: "resource" }
  | { role: "hook"; spec: HookSpec }
  /** Never applied: `hook: Skip`, a Helm test hook, a phase syncward does not run. */
  | { role: "skip"; reason: string };

const ARGO_PHASES = new Set<string>(["PreSync", "Sync", "PostSync", "SyncFail"]);
const ARGO_POLICIES = new Set<string>(["BeforeHookCreation", "HookSucceeded", "HookFailed"]);

/** Helm's hook events that Argo CD runs, and the phase it runs them in. */
const HELM_PHASES: Record<string, HookPhase> = {
  "pre-install": "PreSync",
  "pre-upgrade": "PreSync",
  "post-install": "PostSync",
  "post-upgrade": "PostSync",
};
const HELM_POLICIES: Record<string, DeletePolicy> = {
  "before-hook-creation": "BeforeHookCreation",
  "hook-succeeded": "HookSucceeded",
  "hook-failed": "HookFailed",
};

function list(value: string | undefined): string[] {
  return (value ?? "")
    .split(",")
    .map((s) => s.trim())
    .filter((s) => s !== "");
}

function integer(raw: string | undefined): number {
  if (raw === undefined) return 0;
  const n = Number.parseInt(raw, 10);
  return Number.isFinite(n) ? n : 0;
}

export function roleOf(obj: KubeObject): Role {
  const a = obj.metadata.annotations ?? {};
  const argo = a[HOOK_ANNOTATION];
  if (argo !== undefined) return argoRole(list(argo), a);
  const helm = a[HELM_HOOK_ANNOTATION];
  if (helm !== undefined) return helmRole(list(helm), a);
  return { role: "resource" };
}

function argoRole(names: string[], a: Record<string, string>): Role {
  if (names.includes("Skip")) return { role: "skip", reason: "hook: Skip" };
  const unsupported = names.filter((n) => !ARGO_PHASES.has(n));
  if (unsupported.length > 0) {
    const deleting = unsupported.filter((n) => n === "PreDelete" || n === "PostDelete");
    return {
      role: "skip",
      reason:
        deleting.length > 0
          ? `${deleting.join(", ")} hooks run when an Argo CD Application is deleted; syncward never deletes an environment, so it never runs them`
          : `unknown hook type ${unsupported.join(", ")} (${HOOK_ANNOTATION} takes PreSync, Sync, PostSync, SyncFail or Skip)`,
    };
  }
  const policies = list(a[HOOK_DELETE_POLICY_ANNOTATION]).filter((p): p is DeletePolicy =>
    ARGO_POLICIES.has(p),
  );
  return {
    role: "hook",
    spec: {
      phases: names as HookPhase[],
      wave: integer(a[WAVE_ANNOTATION]),
      policies: policies.length > 0 ? policies : ["BeforeHookCreation"],
    },
  };
}

function helmRole(events: string[], a: Record<string, string>): Role {
  if (events.some((e) => e.startsWith("test"))) return { role: "skip", reason: "Helm test hook" };
  // A CRD installed "as a hook" by Helm 2 charts is an ordinary resource to Argo CD.
  if (events.includes("crd-install")) return { role: "resource" };
  const phases = [...new Set(events.map((e) => HELM_PHASES[e]).filter((p) => p !== undefined))];
  if (phases.length === 0)
    return {
      role: "skip",
      reason: `Helm hook ${events.join(", ")} has no Argo CD phase (pre/post-install and pre/post-upgrade run)`,
    };
  const policies = list(a[HELM_DELETE_POLICY_ANNOTATION])
    .map((p) => HELM_POLICIES[p])
    .filter((p) => p !== undefined);
  return {
    role: "hook",
    spec: {
      phases: phases.sort((x, y) => PHASE_ORDER[x] - PHASE_ORDER[y]),
      wave:
        a[WAVE_ANNOTATION] !== undefined ? integer(a[WAVE_ANNOTATION]) : integer(a[HELM_WEIGHT_ANNOTATION]),
      policies: policies.length > 0 ? policies : ["BeforeHookCreation"],
    },
  };
}

/** Hooks in the render, or live objects a sync created as hooks: neither is managed state. */
export function isHookObject(obj: KubeObject): boolean {
  return roleOf(obj).role !== "resource";
}
