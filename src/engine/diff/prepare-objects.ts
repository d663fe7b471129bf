// The three steps both the comparison and the rendered diff start from: normalize, take out what
// ignoreDifferences selects, mask Secret values.
import type { KubeObject } from "../../kube/object.ts";
import { redactSecrets } from "../redact.ts";
import { ignoredLocations, removeIgnored, rulesFor } from "./ignore-rules.ts";
import { isSecret, normalizeObject } from "./normalize.ts";
import type { CompareOptions } from "./types.ts";

/** Copies of both objects as the comparison sees them; the inputs are not touched. */
export function prepareObjects(
  desired: KubeObject,
  live: KubeObject,
  options: CompareOptions = {},
): { desired: KubeObject; live: KubeObject } {
  const keys = options.ignoreMetadataKeys ?? [];
  const d = normalizeObject(desired, keys);
  const l = normalizeObject(live, keys);
  const rules = rulesFor(options.ignoreDifferences ?? [], desired, live);
  if (rules.length > 0) removeIgnored(ignoredLocations(rules, d, l, live.metadata?.managedFields), d, l);
  // Masks keep "same vs different" per key, so comparing masked Secrets gives the same answer as
  // comparing the values, and no difference carries a secret.
  return isSecret(desired) || isSecret(live) ? redactSecrets(d, l) : { desired: d, live: l };
}
