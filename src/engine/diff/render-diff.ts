// The diff a person reads (CLI, check run, PR comment): like kubectl diff, but only over what the
// comparison considers, with ignored fields gone and Secret values masked.
import { stringify } from "yaml";
import type { KubeObject } from "../../kube/object.ts";
import { keyOf, keyString } from "../../kube/object.ts";
import { attributeDifferences } from "./attribute-differences.ts";
import { ABSENT, compareTrees } from "./compare-values.ts";
import { cloneJson } from "./deep-equal.ts";
import { addAt } from "./ignored-values-from-live.ts";
import { getAt, parsePointer, resolveTokens } from "./json-pointer.ts";
import { unifiedDiff } from "./line-diff.ts";
import { counterpartPath } from "./list-match.ts";
import { prepareObjects } from "./prepare-objects.ts";
import type { CompareOptions, Difference } from "./types.ts";

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
  const plain = compareTrees(prepared.desired, prepared.live, false, prepared.origins).differences;
  const differences = attributeDifferences(plain, desired, live, options);
  if (differences.length === 0) return "";
  const { liveView } = compareTrees(
    withAdditions(prepared.desired, prepared.live, differences),
    prepared.live,
    true,
    prepared.origins,
  );
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
  const body =
    text ||
    `--- live/${name}\n+++ desired/${name}\n${differences.map((d) => `# ${d.kind} ${d.path}\n`).join("")}`;
  return body + addedBy(differences);
}

/**
 * A copy of desired that also holds what untrusted managers added, so the live view shows it and
 * the diff reads as its removal (which is what a sync does).
 */
function withAdditions(desired: KubeObject, live: KubeObject, differences: Difference[]): KubeObject {
  const added = differences.filter((d) => d.kind === "added");
  if (added.length === 0) return desired;
  const out = cloneJson(desired);
  for (const d of added) {
    const tokens = resolveTokens(live, parsePointer(d.path));
    if (!tokens) continue;
    const cp = counterpartPath(tokens, live, out);
    addAt(out, cp.path, tokens.slice(cp.matched), cloneJson(getAt(live, tokens)));
  }
  return out;
}

/** Who made each change (from managedFields), one comment line each, under the diff. */
function addedBy(differences: Difference[]): string {
  return differences
    .filter((d) => d.owners?.length)
    .map((d) => {
      const who = (d.owners ?? [])
        .map((o) => `${o.manager} (${o.operation}${o.subresource ? ` ${o.subresource}` : ""})`)
        .join(", ");
      const spoofed = d.spoofed ? `\n# ${d.path}: SPOOFING: ${d.spoofed}` : "";
      return d.kind === "changed"
        ? `# ${d.path}: changed by ${who}; a sync restores Git's value${spoofed}\n`
        : `# ${d.path}: added by ${who}; not in Git, a sync removes it${spoofed}\n`;
    })
    .join("");
}
