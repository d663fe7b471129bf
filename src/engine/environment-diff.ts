// The whole environment's diff as a person reads it (CLI `app diff`, check runs, PR previews):
// one redacted unified diff per object to create or change, and a line per object to prune.
import type { EnvironmentConfig } from "../config/types.ts";
import { type KubeObject, keyOf, keyString } from "../kube/object.ts";
import { renderDiff } from "./diff/index.ts";
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

export function environmentDiff(plan: Plan, env: EnvironmentConfig): string {
  const parts: string[] = [];
  for (const task of plan.steps.flatMap((s) => s.tasks)) {
    const text = renderDiff(task.obj, task.live ?? stub(task.obj), {
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
