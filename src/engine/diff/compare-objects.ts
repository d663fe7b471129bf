import type { KubeObject } from "../../kube/object.ts";
import { attributeDifferences } from "./attribute-differences.ts";
import { compareTrees } from "./compare-values.ts";
import { prepareObjects } from "./prepare-objects.ts";
import type { CompareOptions, Comparison } from "./types.ts";

/**
 * Is live what Git declares? A subset comparison of normalized objects (see compare-values.ts):
 * server defaults, status and trusted managers' extra fields are not drift; a changed, missing or
 * extra list item is, and so is whatever an untrusted field manager added (see foreign-fields.ts). Secret values in the differences are masks, never the values.
 * Throws IgnoreRuleError when an applicable ignoreDifferences rule is broken.
 */
export function compareObjects(
  desired: KubeObject,
  live: KubeObject,
  options: CompareOptions = {},
): Comparison {
  const prepared = prepareObjects(desired, live, options);
  const compared = compareTrees(prepared.desired, prepared.live, false, prepared.origins);
  const differences = attributeDifferences(compared.differences, desired, live, options);
  return { inSync: differences.length === 0, differences };
}
