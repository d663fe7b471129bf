// Argo CD's per-resource options: `argocd.argoproj.io/sync-options` and `compare-options` on one
// object. Pure. An option syncward does not know is kept by name so the result can say it was
// not honoured, instead of dropping it without a word.
import type { KubeObject } from "../kube/object.ts";

export const SYNC_OPTIONS_ANNOTATION = "argocd.argoproj.io/sync-options";
export const COMPARE_OPTIONS_ANNOTATION = "argocd.argoproj.io/compare-options";

export interface ResourceOptions {
  /** `false`: never pruned; `confirm`: pruned only with an explicit confirmation. */
  prune?: "false" | "confirm";
  pruneLast?: boolean;
  replace?: boolean;
  serverSideApply?: boolean;
  validate?: boolean;
  skipDryRunOnMissingResource?: boolean;
  force?: boolean;
  failOnSharedResource?: boolean;
  /** compare-options IgnoreExtraneous: an object only live has does not make the environment OutOfSync. */
  ignoreExtraneous?: boolean;
  /** `Key=Value` entries syncward does not honour. */
  unknown: string[];
}

const BOOLEAN: Record<string, keyof ResourceOptions> = {
  PruneLast: "pruneLast",
  Replace: "replace",
  ServerSideApply: "serverSideApply",
  Validate: "validate",
  SkipDryRunOnMissingResource: "skipDryRunOnMissingResource",
  Force: "force",
  FailOnSharedResource: "failOnSharedResource",
};

function entries(value: string | undefined): string[] {
  return (value ?? "")
    .split(",")
    .map((s) => s.trim())
    .filter((s) => s !== "");
}

export function parseResourceOptions(annotations: Record<string, string> | undefined): ResourceOptions {
  const options: ResourceOptions = { unknown: [] };
  const set = options as unknown as Record<string, unknown>;
  for (const entry of entries(annotations?.[SYNC_OPTIONS_ANNOTATION])) {
    const eq = entry.indexOf("=");
    const key = eq < 0 ? entry : entry.slice(0, eq).trim();
    const value = eq < 0 ? "" : entry.slice(eq + 1).trim();
    const field = BOOLEAN[key];
    if (field && (value === "true" || value === "false")) set[field] = value === "true";
    else if ((key === "Prune" || key === "Delete") && (value === "false" || value === "confirm"))
      options.prune = options.prune === "false" ? "false" : value;
    else if ((key === "Prune" || key === "Delete") && value === "true") continue;
    else options.unknown.push(entry);
  }
  for (const entry of entries(annotations?.[COMPARE_OPTIONS_ANNOTATION])) {
    if (entry === "IgnoreExtraneous") options.ignoreExtraneous = true;
    else options.unknown.push(`compare-options ${entry}`);
  }
  return options;
}

export function resourceOptionsOf(obj: KubeObject): ResourceOptions {
  return parseResourceOptions(obj.metadata.annotations);
}

/** Kinds Argo CD never deletes to recreate: their loss takes data or every object in them along. */
export function mayRecreate(kind: string): boolean {
  return kind !== "CustomResourceDefinition" && kind !== "Namespace" && kind !== "PersistentVolumeClaim";
}
