// requireChecks through GitHub. A check named alone (`ci`) keeps branch protection's "any source"
// meaning: any app's check run of that name or a commit status (context) counts, so it is green
// only when some source passed it and none is failing or pending (the latest status; of runs, the
// newest of each job: a re-run replaces the run it re-runs, in the same check suite, but a newer
// run elsewhere, which a workflow on any branch can create for any commit, hides no failing or
// pending one). A check pinned to an app (`{name: ci, app: github-actions}`, or a required check
// branch protection or a ruleset pins to an app for `true`) counts only that app's runs of the
// name: another app's run, or a commit status, that anyone able to write one could add, never
// does. `true` with nothing required on the branch fails closed. syncward's own runs never count.
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
  check_suite?: { id: number } | null;
  external_id?: string | null;
}

/** The job a run belongs to: a re-run is in the same check suite (or has the same external id). */
function jobOf(r: Run): string {
  const app = r.app?.id ?? 0;
  if (r.check_suite?.id !== undefined) return `${app}:suite:${r.check_suite.id}`;
  if (r.external_id) return `${app}:external:${r.external_id}`;
  return `${app}:run:${r.id}`;
}

type Verdict = "passed" | "pending" | "failed" | "absent";

const passed = (r: Run) => r.status === "completed" && PASSED.has(r.conclusion ?? "");

/** How a check stands: `runs` are the runs of its name, `status` the latest commit status of that context. */
function verdictOf(wanted: Wanted, runs: readonly Run[], status: string | undefined): Verdict {
  const pinned = wanted.appId !== undefined || wanted.appSlug !== undefined;
  // A re-run replaces the earlier run of the same job: the newest one of each job decides.
  const newestByJob = new Map<string, Run>();
  for (const r of runs) {
    if (pinned && !(r.app && (r.app.id === wanted.appId || r.app.slug === wanted.appSlug))) continue;
    const key = jobOf(r);
    const known = newestByJob.get(key);
    if (!known || r.id > known.id) newestByJob.set(key, r);
  }
  const sources: Verdict[] = [...newestByJob.values()].map((r) =>
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
    // Nothing required on the branch is not "every check passed": it fails closed.
    if (checks.length === 0)
      return wanted === true
        ? [`no required checks found for ${branch} (neither branch protection nor a ruleset names one)`]
        : [];
    // Every run, not GitHub's default `latest` (the newest of each name and app), which would let
    // a newer run of the same name hide an older failing or pending one of another job.
    const runs = (
      await gh.paginate(gh.rest.checks.listForRef, { ...this.repo, ref: sha, filter: "all", per_page: 100 })
    ).filter((r) => !r.name.startsWith(CHECK_PREFIX) && !r.name.startsWith(PREVIEW_PREFIX)) as Run[];
    const statuses = await this.statusesOf(sha);
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

  /** The latest state of each commit status context on `sha`, every page of them. */
  private async statusesOf(sha: string): Promise<Map<string, string>> {
    const gh = await this.octokit();
    const statuses = new Map<string, string>();
    for (let page = 1; ; page++) {
      const { data } = await gh.rest.repos.getCombinedStatusForRef({
        ...this.repo,
        ref: sha,
        per_page: 100,
        page,
      });
      for (const st of data.statuses) if (!statuses.has(st.context)) statuses.set(st.context, st.state);
      if (data.statuses.length < 100 || statuses.size >= data.total_count) return statuses;
    }
  }

  /**
   * The branch's required status checks, from classic branch protection and from the rulesets
   * that apply to it, with the app each is pinned to; none when neither requires any.
   */
  private async requiredOf(branch: string): Promise<Array<Wanted & { label: string }>> {
    const gh = await this.octokit();
    const { data } = await gh.rest.repos.getBranch({ ...this.repo, branch });
    const required = data.protection?.required_status_checks;
    const byName = new Map<string, Wanted & { label: string }>();
    // A name required both pinned and by any source: the pinned requirement is the stricter.
    const add = (name: string, appId: number | null | undefined) => {
      if (byName.get(name)?.appId !== undefined && !(appId && appId > 0)) return;
      byName.set(name, appId && appId > 0 ? { name, appId, label: name } : { name, label: name });
    };
    for (const context of required?.contexts ?? []) add(context, undefined);
    // app_id -1 or absent: any source (GitHub's "any source"); otherwise that app only.
    for (const c of required?.checks ?? []) add(c.context, c.app_id);
    const rules = await gh.paginate(gh.rest.repos.getBranchRules, { ...this.repo, branch, per_page: 100 });
    for (const rule of rules)
      if (rule.type === "required_status_checks")
        for (const c of rule.parameters?.required_status_checks ?? []) add(c.context, c.integration_id);
    return [...byName.values()];
  }
}
