// batch/CronJob, as Argo CD's built-in CronJob health check judges it: by its last run, since
// its own status only records when runs were scheduled and succeeded. A CronJob that has never
// succeeded is Healthy with a warning (its first run may still be to come, or be retried), and
// one whose last finished run failed is Degraded until a later run succeeds.

import type { KubeObject } from "../../kube/object.ts";
import type { Health } from "../result.ts";
import { isFields, list, spec, text } from "./fields.ts";

function time(value: string): number {
  const t = Date.parse(value);
  return Number.isNaN(t) ? 0 : t;
}

export function cronJobHealth(obj: KubeObject): Health {
  if (spec(obj).suspend === true) return { status: "Suspended", message: "CronJob is Suspended" };
  if (!isFields(obj.status)) return { status: "Progressing", message: "Waiting for CronJob" };

  const st = obj.status;
  const lastSchedule = text(st, "lastScheduleTime");
  const lastSuccess = text(st, "lastSuccessfulTime");
  if (!lastSchedule) return { status: "Healthy", message: "CronJob has not been scheduled yet" };
  if (!lastSuccess) {
    return {
      status: "Healthy",
      message: `CronJob has never completed successfully (last scheduled ${lastSchedule}); it may not be healthy`,
    };
  }
  const active = list(st, "active").filter(isFields);
  if (active.length > 0) {
    const names = active.map((ref) => text(ref, "name")).filter((n) => n !== "");
    return {
      status: "Healthy",
      message: `Job ${names.join(", ") || "run"} is running; the last finished run may not have succeeded`,
    };
  }
  if (time(lastSuccess) < time(lastSchedule)) {
    return {
      status: "Degraded",
      message: `CronJob has not completed its last run successfully (scheduled ${lastSchedule}, last success ${lastSuccess})`,
    };
  }
  return { status: "Healthy", message: `CronJob completed its last run successfully at ${lastSuccess}` };
}
