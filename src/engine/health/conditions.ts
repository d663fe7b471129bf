// Status conditions: a lookup shared by the per-kind rules, and the generic rule for custom
// resources that follow the Kubernetes convention of a `Ready` or `Available` condition.

import type { KubeObject } from "../../kube/object.ts";
import type { Health } from "../result.ts";
import {
  type Fields,
  generation,
  isFields,
  joinParts,
  list,
  optionalNumber,
  status,
  text,
} from "./fields.ts";

export interface Condition {
  type: string;
  /** "True", "False" or "Unknown" as the API writes it; "" when absent. */
  status: string;
  reason: string;
  message: string;
  observedGeneration?: number;
  lastTransitionTime: string;
}

function toCondition(raw: Fields): Condition {
  const observedGeneration = optionalNumber(raw, "observedGeneration");
  return {
    type: text(raw, "type"),
    status: text(raw, "status"),
    reason: text(raw, "reason"),
    message: text(raw, "message").trim(),
    lastTransitionTime: text(raw, "lastTransitionTime"),
    ...(observedGeneration === undefined ? {} : { observedGeneration }),
  };
}

/** Conditions from a list value (`status.conditions`, or a parsed annotation). */
export function conditionsFrom(value: unknown): Condition[] {
  return Array.isArray(value) ? value.filter(isFields).map(toCondition) : [];
}

export function conditionsOf(obj: KubeObject): Condition[] {
  return conditionsFrom(list(status(obj), "conditions"));
}

export function findCondition(conditions: Condition[], type: string): Condition | undefined {
  return conditions.find((c) => c.type === type);
}

export function isTrue(condition: Condition | undefined): boolean {
  return condition?.status === "True";
}

export function isFalse(condition: Condition | undefined): boolean {
  return condition?.status === "False";
}

/** Condition types whose `True` means the resource failed (kstatus' Stalled, and common spellings). */
const FAILURE_TYPES = new Set(["Stalled", "Failed", "Failure", "Degraded", "Error"]);

/** Reasons that say something went wrong rather than "not done yet" (ReconcileError, InvalidSpec, ...). */
const FAILURE_REASON =
  /fail|error|invalid|denied|forbidden|unauthori[sz]ed|backoff|exceeded|exhausted|rejected/i;

/** A condition other than `ready` that reports a failure, if any. */
function failingCondition(conditions: Condition[], ready: Condition): Condition | undefined {
  return conditions.find(
    (c) =>
      c !== ready &&
      ((FAILURE_TYPES.has(c.type) && isTrue(c)) || (isFalse(c) && FAILURE_REASON.test(c.reason))),
  );
}

/**
 * Generic rule for kinds syncward has no specific rule for (mostly custom resources); Argo CD has
 * none and shows such resources without health. `Ready` (or else `Available`) decides:
 * - True: Healthy;
 * - a status (or condition) written for an older `metadata.generation`: Progressing;
 * - another condition reporting failure (Stalled/Failed/Degraded/Error True, or any condition
 *   False with a failure reason such as Crossplane's `Synced: ReconcileError`): Degraded;
 * - `Reconciling: True` (the kstatus convention Flux uses): Progressing;
 * - False with a failure reason (matching FAILURE_REASON): Degraded;
 * - False for any other reason (cert-manager still issuing, Crossplane `Creating`), or Unknown:
 *   Progressing. A resource that stays there runs into the wave's health timeout.
 * Without either condition the kind has no health notion: undefined.
 */
export function conditionsHealth(obj: KubeObject): Health | undefined {
  const conditions = conditionsOf(obj);
  const ready = findCondition(conditions, "Ready") ?? findCondition(conditions, "Available");
  if (!ready) return undefined;

  const gen = generation(obj);
  const observed = ready.observedGeneration ?? optionalNumber(status(obj), "observedGeneration");
  if (observed !== undefined && gen > observed) {
    return {
      status: "Progressing",
      message: `Waiting for the controller to observe generation ${gen} (status describes generation ${observed})`,
    };
  }

  if (isTrue(ready))
    return ready.message ? { status: "Healthy", message: ready.message } : { status: "Healthy" };

  const failing = failingCondition(conditions, ready);
  if (failing) {
    return {
      status: "Degraded",
      message: joinParts(`${failing.type}: ${failing.reason || failing.status}`, failing.message),
    };
  }
  const reconciling = findCondition(conditions, "Reconciling");
  if (isTrue(reconciling)) {
    return {
      status: "Progressing",
      message: reconciling?.message || ready.message || `${ready.type} is not yet True`,
    };
  }
  if (isFalse(ready) && FAILURE_REASON.test(ready.reason)) {
    return { status: "Degraded", message: joinParts(ready.reason, ready.message) };
  }
  return {
    status: "Progressing",
    message: ready.message || ready.reason || `Waiting for ${ready.type} to be True`,
  };
}
