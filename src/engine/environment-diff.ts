// The whole environment's diff as a person reads it (CLI `app diff`, check runs, PR previews):
// one redacted unified diff per object to create or change, and a line per object to prune.
import type { EnvironmentConfig } from "../config/types.ts";
import { type KubeObject, keyOf, keyString } from "../kube/object.ts";
import { renderDiff } from "./diff/index.ts";
import { isSecret } from "./diff/normalize.ts";
import type { Plan } from "./plan.ts";

/** syncward's own bookkeeping is not a change a person needs to read. */
const OWN_METADATA = ["syncward.dev/*"];

function stub(obj: KubeObject): KubeObject {
  return {
    apiVersion: obj.apiVersion,
    kind: obj.kind,
    metadata: { name: obj.metadata.name, namespace: obj.metadata.namespace },
  };
}

/**
 * The same placeholder for every value, in `data` (stringData folded in, as the API server does):
 * equal and different values look alike, and only added or removed keys show.
 */
function withoutValues(obj: KubeObject): KubeObject {
  const keys = new Set<string>();
  for (const field of ["data", "stringData"] as const) {
    const map = obj[field];
    if (map && typeof map === "object" && !Array.isArray(map)) for (const k of Object.keys(map)) keys.add(k);
  }
  const { stringData: _folded, ...copy } = obj;
  if (keys.size > 0) copy.data = Object.fromEntries([...keys].map((k) => [k, NOT_COMPARED]));
  return copy as KubeObject;
}

/** base64 of "(not compared)". */
const NOT_COMPARED = Buffer.from("(not compared)").toString("base64");

export interface EnvironmentDiffOptions {
  /**
   * Secret values are not compared at all (for pull-request previews, which people who cannot
   * read the Secret see): only added and removed keys and other fields show.
   */
  blindSecrets?: boolean;
}

export function environmentDiff(
  plan: Plan,
  env: EnvironmentConfig,
  options: EnvironmentDiffOptions = {},
): string {
  const parts: string[] = [];
  for (const task of plan.steps.flatMap((s) => s.tasks)) {
    const blind = options.blindSecrets && (isSecret(task.obj) || isSecret(task.live));
    const desired = blind ? withoutValues(task.obj) : task.obj;
    const live = task.live && blind ? withoutValues(task.live) : task.live;
    const text = renderDiff(desired, live ?? stub(task.obj), {
      ignoreDifferences: env.ignoreDifferences,
      trustedManagers: env.trustedManagers,
      ignoreMetadataKeys: OWN_METADATA,
    });
    if (text) parts.push(text.trimEnd());
  }
  for (const p of [...plan.prunes, ...plan.requiresPruning]) {
    const name = keyString(keyOf(p.live));
    parts.push(
      `--- live/${name}\n+++ /dev/null (${plan.prunes.includes(p) ? "will be pruned" : "requires pruning; prune is off"})`,
    );
  }
  return parts.length > 0 ? `${parts.join("\n")}\n` : "";
}
