// core/v1 Pod, after Argo CD's gitops-engine. Long-running pods (restartPolicy Always, the
// default) are judged by readiness and container errors; pods with a finite life
// (OnFailure, Never: jobs, hooks) are Healthy only once Succeeded, and their container
// errors are not Degraded while they may still recover, so a hook is not failed early.

import type { KubeObject } from "../../kube/object.ts";
import type { Health } from "../result.ts";
import { conditionsOf, findCondition, isFalse, isTrue } from "./conditions.ts";
import { count, type Fields, fieldsAt, isFields, joinParts, list, spec, status, text } from "./fields.ts";

interface ContainerStatus {
  name: string;
  ready: boolean;
  restartCount: number;
  waiting?: Fields;
  terminated?: Fields;
  lastTerminated?: Fields;
}

function containerStatuses(st: Fields, key: string): ContainerStatus[] {
  return list(st, key)
    .filter(isFields)
    .map((raw) => {
      const state = fieldsAt(raw, "state");
      const last = fieldsAt(raw, "lastState");
      return {
        name: text(raw, "name"),
        ready: raw.ready === true,
        restartCount: count(raw, "restartCount"),
        ...(isFields(state.waiting) ? { waiting: state.waiting } : {}),
        ...(isFields(state.terminated) ? { terminated: state.terminated } : {}),
        ...(isFields(last.terminated) ? { lastTerminated: last.terminated } : {}),
      };
    });
}

/** Waiting reasons that mean the container cannot start without someone's help. */
function isErrorWaitingReason(reason: string): boolean {
  return (
    reason.startsWith("Err") ||
    reason.endsWith("Error") ||
    reason.endsWith("BackOff") ||
    reason === "InvalidImageName"
  );
}

function describeExit(terminated: Fields): string {
  const reason = text(terminated, "reason") || "terminated";
  const code = terminated.exitCode;
  return typeof code === "number" ? `${reason}, exit code ${code}` : reason;
}

function describeWaiting(c: ContainerStatus): string {
  const waiting = c.waiting ?? {};
  let line = joinParts(`container "${c.name}" is in ${text(waiting, "reason")}`, text(waiting, "message"));
  if (c.lastTerminated) line += ` (last exit: ${describeExit(c.lastTerminated)})`;
  return line;
}

/** Why a finished container failed, or "" when it did not. */
function failureOf(c: ContainerStatus): string {
  const t = c.terminated;
  if (!t) return "";
  const message = text(t, "message").trim();
  if (message) return joinParts(`container "${c.name}"`, message);
  if (text(t, "reason") === "OOMKilled") return `container "${c.name}" was OOMKilled`;
  const code = count(t, "exitCode");
  return code !== 0 ? `container "${c.name}" failed with exit code ${code}` : "";
}

export function podHealth(obj: KubeObject): Health {
  const st = status(obj);
  const restartPolicy = text(spec(obj), "restartPolicy") || "Always";
  const init = containerStatuses(st, "initContainerStatuses");
  const main = containerStatuses(st, "containerStatuses");
  const all = [...init, ...main];
  const podMessage = joinParts(text(st, "reason"), text(st, "message"));

  if (restartPolicy === "Always") {
    const stuck = all.filter((c) => c.waiting && isErrorWaitingReason(text(c.waiting, "reason")));
    if (stuck.length > 0) return { status: "Degraded", message: stuck.map(describeWaiting).join("; ") };
  }

  const phase = text(st, "phase");
  switch (phase) {
    case "Pending": {
      const scheduled = findCondition(conditionsOf(obj), "PodScheduled");
      const waiting = all.filter((c) => c.waiting).map(describeWaiting);
      const message =
        podMessage ||
        (isFalse(scheduled) ? joinParts("Pod is not scheduled", scheduled?.message) : "") ||
        waiting.join("; ") ||
        "Pod is pending";
      return { status: "Progressing", message };
    }
    case "Succeeded":
      return podMessage ? { status: "Healthy", message: podMessage } : { status: "Healthy" };
    case "Failed": {
      const message = podMessage || all.map(failureOf).find((m) => m !== "") || "Pod failed";
      return { status: "Degraded", message };
    }
    case "Running": {
      if (restartPolicy !== "Always") {
        // A pod meant to finish (job or hook pod) is Healthy only once it has Succeeded.
        return { status: "Progressing", message: podMessage || "Pod is running" };
      }
      if (isTrue(findCondition(conditionsOf(obj), "Ready"))) {
        return podMessage ? { status: "Healthy", message: podMessage } : { status: "Healthy" };
      }
      const restarted = main.filter((c) => !c.ready && c.lastTerminated);
      if (restarted.length > 0) {
        const message = restarted
          .map((c) => {
            const exit = c.lastTerminated ? describeExit(c.lastTerminated) : "";
            return `container "${c.name}" is not ready and has restarted ${c.restartCount} times (last exit: ${exit})`;
          })
          .join("; ");
        return { status: "Degraded", message: podMessage || message };
      }
      const notReady = main.filter((c) => !c.ready).map((c) => c.name);
      const message =
        podMessage ||
        (notReady.length > 0
          ? `Waiting for containers to be ready: ${notReady.join(", ")}`
          : "Waiting for the pod to be ready");
      return { status: "Progressing", message };
    }
    default:
      return {
        status: "Unknown",
        message: podMessage || (phase ? `Pod phase is ${phase}` : "Pod phase is not reported"),
      };
  }
}
