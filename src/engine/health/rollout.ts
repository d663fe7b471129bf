// argoproj.io/Rollout (Argo Rollouts), as Argo CD's built-in check reads it: Argo Rollouts
// (v1.0+) writes its verdict to status.phase and status.message. A paused Rollout (a canary
// step's pause, or spec.paused) is Suspended; an aborted one is Degraded. Before the controller
// has seen the current spec its status describes an older one, so that is Progressing.

import type { KubeObject } from "../../kube/object.ts";
import type { Health } from "../result.ts";
import { conditionsOf, findCondition } from "./conditions.ts";
import { generation, isFields, joinParts, list, spec, status, text } from "./fields.ts";

/** Argo Rollouts writes observedGeneration as a string (older releases: a hash); only a number counts. */
function observedGeneration(st: Record<string, unknown>): number | undefined {
  const raw = st.observedGeneration;
  const n = typeof raw === "number" ? raw : typeof raw === "string" && /^\d+$/.test(raw) ? Number(raw) : NaN;
  return Number.isFinite(n) ? n : undefined;
}

export function rolloutHealth(obj: KubeObject): Health {
  const st = status(obj);
  const observed = observedGeneration(st);
  if (observed !== undefined && generation(obj) > observed) {
    return { status: "Progressing", message: "Waiting for rollout spec update to be observed" };
  }
  const invalid = findCondition(conditionsOf(obj), "InvalidSpec");
  if (invalid) return { status: "Degraded", message: invalid.message || "Rollout spec is invalid" };

  const message = text(st, "message");
  if (st.abort === true) {
    return { status: "Degraded", message: joinParts("Rollout is aborted", message) };
  }
  const pauses = list(st, "pauseConditions").filter(isFields);
  const phase = text(st, "phase");
  if (phase === "Paused" || pauses.length > 0 || spec(obj).paused === true) {
    const reason = pauses.map((p) => text(p, "reason")).find((r) => r !== "");
    return { status: "Suspended", message: message || reason || "Rollout is paused" };
  }
  switch (phase) {
    case "Healthy":
    case "Progressing":
    case "Degraded":
      return message ? { status: phase, message } : { status: phase };
    case "":
      return { status: "Progressing", message: "Waiting for the Argo Rollouts controller to report a phase" };
    default:
      return { status: "Unknown", message: joinParts(`Unknown rollout phase ${phase}`, message) };
  }
}
