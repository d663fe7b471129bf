// requireChecks through GitHub: a check counts as passed on a commit when its latest check run of
// that name completed successfully (success, neutral or skipped), or its commit status (context)
// is success. `true` asks for the tracked branch's required status checks (branch protection, as
// GitHub shows it on the branch). syncward's own check runs never count.
import type { RequiredChecks } from "../reconciler/required-checks.ts";
import type { OctokitFactory, RepoRef } from "./octokit.ts";

const PASSED = new Set(["success", "neutral", "skipped"]);

export class GitHubRequiredChecks implements RequiredChecks {
  constructor(
    private readonly octokit: OctokitFactory,
    private readonly repo: RepoRef,
  ) {}

  async missing(sha: string, wanted: string[] | true, branch: string): Promise<string[]> {
    const gh = await this.octokit();
    const names = wanted === true ? await this.requiredOf(branch) : wanted;
    if (names.length === 0) return [];
    const runs = await gh.paginate(gh.rest.checks.listForRef, { ...this.repo, ref: sha, per_page: 100 });
    // A check re-run on the same commit replaces the earlier run: the newest one of a name decides.
    const latest = new Map<string, (typeof runs)[number]>();
    for (const run of runs) {
      const seen = latest.get(run.name);
      if (!seen || run.id > seen.id) latest.set(run.name, run);
    }
    const passed = new Set(
      [...latest.values()]
        .filter((r) => r.status === "completed" && PASSED.has(r.conclusion ?? ""))
        .map((r) => r.name),
    );
    const { data } = await gh.rest.repos.getCombinedStatusForRef({ ...this.repo, ref: sha, per_page: 100 });
    for (const status of data.statuses) if (status.state === "success") passed.add(status.context);
    return names.filter((n) => !passed.has(n));
  }

  /** The branch's required status checks; none when it is not protected. */
  private async requiredOf(branch: string): Promise<string[]> {
    const gh = await this.octokit();
    const { data } = await gh.rest.repos.getBranch({ ...this.repo, branch });
    const required = data.protection?.required_status_checks;
    return [...new Set([...(required?.contexts ?? []), ...(required?.checks ?? []).map((c) => c.context)])];
  }
}
