// The three steps both the comparison and the rendered diff start from: normalize, take out what
// ignoreDifferences selects, mask Secret values.
import type { KubeObject } from "../../kube/object.ts";
import { redactSecrets } from "../redact.ts";
import { ignoredLocations, type Origins, removeIgnored, rulesFor } from "./ignore-rules.ts";
import { isSecret, normalizeObject, secretNullsAsEmpty } from "./normalize.ts";
import type { CompareOptions } from "./types.ts";

export interface PreparedObjects {
  desired: KubeObject;
  live: KubeObject;
  /** Lists that lost ignored items: their items' indices in the caller's objects. */
  origins: Origins;
}

/** Copies of both objects as the comparison sees them; the inputs are not touched. */
export function prepareObjects(
  desired: KubeObject,
  live: KubeObject,
  options: CompareOptions = {},
): PreparedObjects {
  const keys = options.ignoreMetadataKeys ?? [];
  let d = normalizeObject(desired, keys);
  let l = normalizeObject(live, keys);
  secretNullsAsEmpty(desired, d, l);
  // Masks keep "same vs different" per key, so comparing masked Secrets gives the same answer as
  // comparing the values, and no difference carries a secret.
  if (isSecret(desired) || isSecret(live)) ({ desired: d, live: l } = redactSecrets(d, l));
  const origins: Origins = new WeakMap();
  const rules = rulesFor(options.ignoreDifferences ?? [], desired, live);
  if (rules.length > 0)
    removeIgnored(ignoredLocations(rules, d, l, live.metadata?.managedFields), d, l, origins);
  return { desired: d, live: l, origins };
}
