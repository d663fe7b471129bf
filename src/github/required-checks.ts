// requireChecks through GitHub: a check counts as passed on a commit when its latest check run of
// that name completed successfully (success, neutral or skipped), or its commit status (context)
// is success. `true` asks for the tracked branch's required status checks (branch protection, as
// GitHub shows it on the branch), each pinned to the app branch protection expects where it names
// one. syncward's own check runs never count.
import type { RequiredChecks } from "../reconciler/required-checks.ts";
import type { OctokitFactory, RepoRef } from "./octokit.ts";
import { CHECK_PREFIX, PREVIEW_PREFIX } from "./reporter.ts";

const PASSED = new Set(["success", "neutral", "skipped"]);

/** A check to pass: its name, and the app whose run alone counts when branch protection pins one. */
interface Wanted {
  name: string;
  appId?: number;
}

export class GitHubRequiredChecks implements RequiredChecks {
  constructor(
    private readonly octokit: OctokitFactory,
    private readonly repo: RepoRef,
  ) {}

  async missing(sha: string, wanted: string[] | true, branch: string): Promise<string[]> {
    const gh = await this.octokit();
    const checks: Wanted[] =
      wanted === true ? await this.requiredOf(branch) : wanted.map((name) => ({ name }));
    if (checks.length === 0) return [];
    const runs = (
      await gh.paginate(gh.rest.checks.listForRef, { ...this.repo, ref: sha, per_page: 100 })
    ).filter((r) => !r.name.startsWith(CHECK_PREFIX) && !r.name.startsWith(PREVIEW_PREFIX));
    const { data } = await gh.rest.repos.getCombinedStatusForRef({ ...this.repo, ref: sha, per_page: 100 });
    const statuses = new Set(data.statuses.filter((st) => st.state === "success").map((st) => st.context));
    return checks
      .filter(({ name, appId }) => {
        // A check re-run on the same commit replaces the earlier run: the newest one decides. Where
        // branch protection pins the app that must report a check, another app's run of that name
        // (a workflow anyone with write access could add) does not count, nor does a commit status.
        const mine = runs.filter((r) => r.name === name && (appId === undefined || r.app?.id === appId));
        const newest = mine.reduce<(typeof runs)[number] | undefined>(
          (a, r) => (!a || r.id > a.id ? r : a),
          undefined,
        );
        const passed = newest?.status === "completed" && PASSED.has(newest.conclusion ?? "");
        return !(passed || (appId === undefined && statuses.has(name)));
      })
      .map((c) => c.name);
  }

  /** The branch's required status checks, with the app each is pinned to; none when it is not protected. */
  private async requiredOf(branch: string): Promise<Wanted[]> {
    const gh = await this.octokit();
    const { data } = await gh.rest.repos.getBranch({ ...this.repo, branch });
    const required = data.protection?.required_status_checks;
    const byName = new Map<string, Wanted>();
    for (const context of required?.contexts ?? []) byName.set(context, { name: context });
    // app_id -1 or absent: any source (GitHub's "any source"); otherwise that app only.
    for (const c of required?.checks ?? [])
      byName.set(
        c.context,
        c.app_id && c.app_id > 0 ? { name: c.context, appId: c.app_id } : { name: c.context },
      );
    return [...byName.values()];
  }
}
