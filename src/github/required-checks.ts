// requireChecks through GitHub. A check named alone (`ci`) keeps branch protection's "any source"
// meaning: any app's check run of that name or a commit status (context) counts, so it is green
// only when some source passed it and none is failing or pending (the newest run of each app, the
// latest status). A check pinned to an app (`{name: ci, app: github-actions}`, or a required
// check branch protection pins to an app for `true`) counts only that app's newest run of the
// name: another app's run, or a commit status, that anyone able to write one could add, never
// does. syncward's own check runs never count.
import type { RequiredCheck } from "../config/types.ts";
import { checkLabel, type RequiredChecks } from "../reconciler/required-checks.ts";
import type { OctokitFactory, RepoRef } from "./octokit.ts";
import { CHECK_PREFIX, PREVIEW_PREFIX } from "./reporter.ts";

const PASSED = new Set(["success", "neutral", "skipped"]);

/** A check to pass: its name, and the app (by id from branch protection, or by slug from the config) whose run alone counts. */
interface Wanted {
  name: string;
  appId?: number;
  appSlug?: string;
}

interface Run {
  id: number;
  name: string;
  status: string;
  conclusion: string | null;
  app: { id: number; slug?: string } | null;
}

type Verdict = "passed" | "pending" | "failed" | "absent";

const passed = (r: Run) => r.status === "completed" && PASSED.has(r.conclusion ?? "");

/** How a check stands: `runs` are the runs of its name, `status` the latest commit status of that context. */
function verdictOf(wanted: Wanted, runs: readonly Run[], status: string | undefined): Verdict {
  const pinned = wanted.appId !== undefined || wanted.appSlug !== undefined;
  // A re-run on the same commit replaces the earlier run of the same app: the newest one decides.
  const newestByApp = new Map<number, Run>();
  for (const r of runs) {
    if (pinned && !(r.app && (r.app.id === wanted.appId || r.app.slug === wanted.appSlug))) continue;
    const key = r.app?.id ?? 0;
    const known = newestByApp.get(key);
    if (!known || r.id > known.id) newestByApp.set(key, r);
  }
  const sources: Verdict[] = [...newestByApp.values()].map((r) =>
    passed(r) ? "passed" : r.status === "completed" ? "failed" : "pending",
  );
  if (!pinned && status !== undefined)
    sources.push(status === "success" ? "passed" : status === "pending" ? "pending" : "failed");
  if (sources.includes("failed")) return "failed";
  if (sources.includes("pending")) return "pending";
  return sources.includes("passed") ? "passed" : "absent";
}

export class GitHubRequiredChecks implements RequiredChecks {
  constructor(
    private readonly octokit: OctokitFactory,
    private readonly repo: RepoRef,
  ) {}

  async missing(sha: string, wanted: RequiredCheck[] | true, branch: string): Promise<string[]> {
    const gh = await this.octokit();
    const checks: Array<Wanted & { label: string }> =
      wanted === true
        ? await this.requiredOf(branch)
        : wanted.map((c) =>
            typeof c === "string"
              ? { name: c, label: c }
              : { name: c.name, appSlug: c.app, label: checkLabel(c) },
          );
    if (checks.length === 0) return [];
    const runs = (
      await gh.paginate(gh.rest.checks.listForRef, { ...this.repo, ref: sha, per_page: 100 })
    ).filter((r) => !r.name.startsWith(CHECK_PREFIX) && !r.name.startsWith(PREVIEW_PREFIX)) as Run[];
    const { data } = await gh.rest.repos.getCombinedStatusForRef({ ...this.repo, ref: sha, per_page: 100 });
    const statuses = new Map(data.statuses.map((st) => [st.context, st.state]));
    return checks
      .filter(
        (c) =>
          verdictOf(
            c,
            runs.filter((r) => r.name === c.name),
            statuses.get(c.name),
          ) !== "passed",
      )
      .map((c) => c.label);
  }

  /** The branch's required status checks, with the app each is pinned to; none when it is not protected. */
  private async requiredOf(branch: string): Promise<Array<Wanted & { label: string }>> {
    const gh = await this.octokit();
    const { data } = await gh.rest.repos.getBranch({ ...this.repo, branch });
    const required = data.protection?.required_status_checks;
    const byName = new Map<string, Wanted & { label: string }>();
    for (const context of required?.contexts ?? []) byName.set(context, { name: context, label: context });
    // app_id -1 or absent: any source (GitHub's "any source"); otherwise that app only.
    for (const c of required?.checks ?? [])
      byName.set(
        c.context,
        c.app_id && c.app_id > 0
          ? { name: c.context, appId: c.app_id, label: c.context }
          : { name: c.context, label: c.context },
      );
    return [...byName.values()];
  }
}
