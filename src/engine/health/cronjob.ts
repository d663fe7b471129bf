// batch/CronJob, after Argo CD's built-in CronJob health script: a CronJob is judged by its
// last run, since its own status only records when runs were scheduled and succeeded.

import type { KubeObject } from "../../kube/object.ts";
import type { Health } from "../result.ts";
import { isFields, list, spec, text } from "./fields.ts";

function time(value: string): number {
  const t = Date.parse(value);
  return Number.isNaN(t) ? 0 : t;
}

export function cronJobHealth(obj: KubeObject): Health {
  if (spec(obj).suspend === true) return { status: "Suspended", message: "CronJob is suspended" };
  if (!isFields(obj.status)) return { status: "Progressing", message: "Waiting for the CronJob controller" };

  const st = obj.status;
  const lastSchedule = text(st, "lastScheduleTime");
  const lastSuccess = text(st, "lastSuccessfulTime");
  const active = list(st, "active").filter(isFields);
  if (!lastSchedule) return { status: "Healthy", message: "CronJob has not been scheduled yet" };

  if (active.length > 0) {
    // While a run is in progress its outcome is unknown; the last finished run may have failed.
    const names = active.map((ref) => text(ref, "name")).filter((n) => n !== "");
    return {
      status: "Healthy",
      message: `Job ${names.join(", ") || "run"} is running (scheduled ${lastSchedule})`,
    };
  }
  if (!lastSuccess) {
    return {
      status: "Degraded",
      message: `CronJob ran (last at ${lastSchedule}) but has never completed successfully`,
    };
  }
  if (time(lastSuccess) < time(lastSchedule)) {
    return {
      status: "Degraded",
      message: `CronJob has not completed its last run successfully (scheduled ${lastSchedule}, last success ${lastSuccess})`,
    };
  }
  return { status: "Healthy", message: `Last run completed successfully at ${lastSuccess}` };
}
