// requireChecks: a port through which the reconciler learns which required checks have not passed
// on a revision. The GitHub adapter is src/github/required-checks.ts; the reconciler knows none.
import type { RequiredCheck } from "../config/types.ts";

export interface RequiredChecks {
  /**
   * The checks among `wanted` (or, for true, among the branch's required status checks) that have
   * not passed on `sha`, as people read them: pending, failed or never reported. Empty when all passed.
   */
  missing(sha: string, wanted: RequiredCheck[] | true, branch: string): Promise<string[]>;
}

/** How a check is named to people: `ci`, or `ci (from github-actions)`. */
export function checkLabel(check: RequiredCheck): string {
  return typeof check === "string" ? check : `${check.name} (from ${check.app})`;
}
