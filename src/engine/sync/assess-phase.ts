// Phase 1 of a sync: prepare the render, read live, compare and plan (assess.ts), unless the
// caller assessed already. A render the cluster would reject is an Error; an unreachable API
// server a Failed the retry may try again.
import { isTransient } from "../../kube/errors.ts";
import { type Assessment, assess } from "../assess.ts";
import { ValidationError } from "../prepare.ts";
import { errorMessage } from "../resource-results.ts";
import type { SyncOutcome } from "../types.ts";
import { hooksDigestOf } from "./hooks-digest.ts";
import { finish, type SyncRun } from "./run.ts";

/** Sets `run.hooksDigest` from the assessment's hooks. */
export async function assessPhase(
  run: SyncRun,
): Promise<{ assessment: Assessment } | { outcome: SyncOutcome }> {
  try {
    const assessment = run.request.assessment ?? (await assess(run.client, run.target, run.request));
    run.hooksDigest = hooksDigestOf(assessment.hooks.map((h) => h.obj));
    return { assessment };
  } catch (err) {
    if (err instanceof ValidationError)
      return { outcome: finish(run, "Error", `${err.heading}: ${err.message}`) };
    return { outcome: finish(run, "Failed", errorMessage(err), isTransient(err)) };
  }
}
