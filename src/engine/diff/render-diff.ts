// The diff a person reads (CLI, check run, PR comment): like kubectl diff, but only over what the
// comparison considers, with ignored fields gone and Secret values masked.
import { stringify } from "yaml";
import type { KubeObject } from "../../kube/object.ts";
import { keyOf, keyString } from "../../kube/object.ts";
import { ABSENT, compareTrees } from "./compare-values.ts";
import { unifiedDiff } from "./line-diff.ts";
import { prepareObjects } from "./prepare-objects.ts";
import type { CompareOptions } from "./types.ts";

export interface RenderDiffOptions extends CompareOptions {
  /** Lines of context around each change (default 3). */
  context?: number;
}

export function toYaml(value: unknown): string {
  if (value === undefined || value === ABSENT) return "";
  return stringify(value, { lineWidth: 0, aliasDuplicateObjects: false });
}

/**
 * A unified diff from live to desired (`--- live/<key>`, `+++ desired/<key>`, key as in
 * `apps/Deployment:shop/web`) of the normalized, ignore-applied, redacted YAML. Live is shown only
 * where desired declares fields, plus extra list items, so server defaults do not flood it; values
 * that compare equal (`500m` and `0.5`) show in desired's spelling. "" when in sync.
 */
export function renderDiff(desired: KubeObject, live: KubeObject, options: RenderDiffOptions = {}): string {
  const prepared = prepareObjects(desired, live, options);
  const { differences, liveView } = compareTrees(prepared.desired, prepared.live, true, prepared.origins);
  if (differences.length === 0) return "";
  const key = keyOf(desired);
  if (!key.namespace) key.namespace = live.metadata?.namespace ?? "";
  const name = keyString(key);
  const text = unifiedDiff(
    toYaml(liveView),
    toYaml(prepared.desired),
    `live/${name}`,
    `desired/${name}`,
    options.context,
  );
  // Never "" when out of sync: should both sides ever render alike, say which fields differ.
  return (
    text ||
    `--- live/${name}\n+++ desired/${name}\n${differences.map((d) => `# ${d.kind} ${d.path}\n`).join("")}`
  );
}
