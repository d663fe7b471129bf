// Status conditions: a lookup shared by the per-kind rules, and the generic rule for custom
// resources that follow the Kubernetes convention of a `Ready` or `Available` condition.

import type { KubeObject } from "../../kube/object.ts";
import type { Health } from "../result.ts";
import { type Fields, generation, isFields, list, optionalNumber, status, text } from "./fields.ts";

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

/**
 * Generic rule for kinds syncward has no specific rule for (mostly custom resources).
 * `Ready` (or else `Available`): True -> Healthy, False -> Degraded, Unknown -> Progressing.
 * Without either condition the kind has no health notion: undefined.
 * Two refinements keep a controller's stale or in-flight status from being read as final:
 * a status (or condition) written for an older `metadata.generation` is Progressing, and
 * `Reconciling: True` (the kstatus convention Flux uses) turns a not-ready resource into Progressing.
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

  const reconciling = findCondition(conditions, "Reconciling");
  if (isTrue(reconciling)) {
    return {
      status: "Progressing",
      message: reconciling?.message || ready.message || `${ready.type} is not yet True`,
    };
  }
  if (isFalse(ready)) {
    return { status: "Degraded", message: ready.message || ready.reason || `${ready.type} is False` };
  }
  return {
    status: "Progressing",
    message: ready.message || ready.reason || `Waiting for ${ready.type} to be True`,
  };
}
