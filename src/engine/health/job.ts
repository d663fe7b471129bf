// batch/Job, after Argo CD's gitops-engine, reading condition statuses (a resumed Job has
// `Suspended: False` and is running again, not finished).

import type { KubeObject } from "../../kube/object.ts";
import type { Health } from "../result.ts";
import { conditionsOf, findCondition, isTrue } from "./conditions.ts";
import { count, joinParts, optionalNumber, spec, status } from "./fields.ts";

export function jobHealth(obj: KubeObject): Health {
  const conditions = conditionsOf(obj);
  const st = status(obj);

  // FailureTarget (Kubernetes 1.31+) comes first, while the failed Job's pods are still terminating.
  const failed = [findCondition(conditions, "Failed"), findCondition(conditions, "FailureTarget")].find(
    isTrue,
  );
  if (failed) {
    return { status: "Degraded", message: joinParts(failed.reason, failed.message) || "Job failed" };
  }

  const complete = findCondition(conditions, "Complete");
  if (complete && isTrue(complete)) {
    return {
      status: "Healthy",
      message: complete.message || `Job completed: ${count(st, "succeeded")} succeeded`,
    };
  }

  const suspended = findCondition(conditions, "Suspended");
  if (isTrue(suspended) || spec(obj).suspend === true) {
    return { status: "Suspended", message: suspended?.message || "Job is suspended" };
  }

  const successCriteriaMet = findCondition(conditions, "SuccessCriteriaMet");
  if (successCriteriaMet && isTrue(successCriteriaMet)) {
    return { status: "Progressing", message: "Job met its success criteria; waiting for its pods to finish" };
  }

  const active = count(st, "active");
  const succeeded = count(st, "succeeded");
  const failedPods = count(st, "failed");
  if (active === 0 && succeeded === 0 && failedPods === 0) {
    return { status: "Progressing", message: "Waiting for the job to start" };
  }
  const backoffLimit = optionalNumber(spec(obj), "backoffLimit");
  const retries =
    failedPods > 0 && backoffLimit !== undefined
      ? ` (${failedPods} of ${backoffLimit} retries used before backoff limit)`
      : "";
  return {
    status: "Progressing",
    message: `Job is running: ${active} active, ${succeeded} succeeded, ${failedPods} failed${retries}`,
  };
}
