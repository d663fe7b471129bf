// requireChecks: a port through which the reconciler learns which required checks have not passed
// on a revision. The GitHub adapter is src/github/required-checks.ts; the reconciler knows none.

export interface RequiredChecks {
  /**
   * The names among `wanted` (or, for true, among the branch's required status checks) that have
   * not passed on `sha`: pending, failed or never reported. Empty when all passed.
   */
  missing(sha: string, wanted: string[] | true, branch: string): Promise<string[]>;
}
