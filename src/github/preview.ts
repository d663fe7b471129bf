// Pull-request previews: what merging a pull request would change in each environment, as a check
// run named `syncward preview / <env>` on the PR's head commit. A preview writes nothing, but it
// reads the live cluster and shows what it found to everyone who can see the pull request, and it
// costs the API server work. So who gets one is narrower than who can open a pull request:
// - a fork's pull request gets no automatic preview (anyone on GitHub can open one); a collaborator
//   with write permission may ask with `/diff`, unless the operator set SYNCWARD_FORK_PREVIEWS=never;
// - environments marked production or gated by approval are previewed only with `previews: true`;
// - Secret values are never compared in a preview: equal and different values look the same, so a
//   guessed value cannot be confirmed by a mask or a count;
// - previews run one at a time per repository in a queue of their own (at most one waiting per pull
//   request), never in the environment's lane, so they cannot hold up its syncs or self-heals.
import type { EnvironmentConfig } from "../config/types.ts";
import { environmentDiff } from "../engine/environment-diff.ts";
import type { Plan } from "../engine/plan.ts";
import { ValidationError } from "../engine/prepare.ts";
import type { ResourceResult, SyncResult } from "../engine/result.ts";
import { keyOf, kubectlName } from "../kube/object.ts";
import type { Logger } from "../reconciler/environment-controller.ts";
import { SourceError } from "../source/errors.ts";
import { sleep } from "../util/sleep.ts";
import { SECRET_NOT_COMPARED } from "./check-run-sections.ts";
import { fenced, inertText } from "./markdown.ts";
import type { Octokit, RepoRef } from "./octokit.ts";
import type { RepoRuntime } from "./runtime.ts";
import type { PreviewInfo } from "./summary.ts";

export type ForkPreviews = "never" | "collaborators";

/** The operator's rule for fork pull requests (SYNCWARD_FORK_PREVIEWS); no repository can widen it. */
export function forkPreviews(env: NodeJS.ProcessEnv = process.env): ForkPreviews {
  const value = env.SYNCWARD_FORK_PREVIEWS?.trim() || "collaborators";
  if (value === "never" || value === "collaborators") return value;
  throw new Error(
    `SYNCWARD_FORK_PREVIEWS=${JSON.stringify(value)} is not valid: use "never" or "collaborators" (the default)`,
  );
}

interface PullRepos {
  head: { repo?: { id: number } | null };
  base: { repo: { id: number } };
}

/** A pull request whose head lives in another repository (or in one that was deleted). */
export function isForkPull(pr: PullRepos): boolean {
  return !pr.head.repo || pr.head.repo.id !== pr.base.repo.id;
}

/** Previews of environments that hold production or wait for approval are opt-in. */
export function previewsEnabled(env: EnvironmentConfig): boolean {
  return env.previews ?? !(env.production || env.approval);
}

export interface PreviewTarget {
  /** The commit the check run goes on: the PR's head. */
  head: string;
  /** What is rendered: GitHub's test merge commit when the PR merges cleanly, else the head. */
  revision: string;
  /** Said on the check run when the head is previewed instead of the merge. */
  note?: string;
  /** The head lives in another repository (see isForkPull). */
  fork: boolean;
  /** The pull request as its check run names it: head and base, never the test merge. */
  pull?: PreviewInfo;
}

/**
 * What merging would deploy: GitHub's test merge of the PR into its base (`merge_commit_sha` while
 * `mergeable`), so a branch behind its base does not show other people's merged changes as being
 * reverted. GitHub computes mergeability in the background after a push: `mergeable: null` is
 * asked again a few times before falling back to the head.
 */
export async function previewTarget(
  gh: Octokit,
  repo: RepoRef,
  pullNumber: number,
  waitsMs: readonly number[] = [1_000, 2_000, 4_000],
): Promise<PreviewTarget> {
  for (let attempt = 0; ; attempt++) {
    const { data: pr } = await gh.rest.pulls.get({ ...repo, pull_number: pullNumber });
    const head = pr.head.sha;
    const fork = isForkPull(pr);
    const pull: PreviewInfo | undefined =
      typeof pr.head.ref === "string" && typeof pr.base.ref === "string"
        ? {
            number: pullNumber,
            headRef: pr.head.ref,
            headSha: head,
            baseRef: pr.base.ref,
            ...(typeof pr.base.sha === "string" ? { baseSha: pr.base.sha } : {}),
          }
        : undefined;
    if (pr.mergeable === true && pr.merge_commit_sha)
      return { head, revision: pr.merge_commit_sha, fork, ...(pull ? { pull } : {}) };
    if (pr.mergeable === false)
      return {
        head,
        fork,
        ...(pull ? { pull } : {}),
        revision: head,
        note: `:warning: This pull request has conflicts with \`${inertText(pr.base.ref)}\`: previewing its head commit as it is, which may show changes merged since it branched off as being reverted.`,
      };
    const wait = waitsMs[attempt];
    if (wait === undefined)
      return {
        head,
        fork,
        ...(pull ? { pull } : {}),
        revision: head,
        note: "GitHub has not computed the merge with the base branch yet: previewing the head commit as it is.",
      };
    await sleep(wait);
  }
}

/**
 * Previews of one repository, one at a time. A newer preview of the same pull request replaces
 * one still waiting (it would be stale anyway); past `capacity` waiting pull requests the oldest is
 * dropped with a warning. Each caller's promise settles when its preview ran (rejecting with the
 * preview's error) or was replaced or dropped.
 */
export class PreviewQueue {
  private readonly waiting = new Map<
    string,
    { job: () => Promise<void>; resolve: () => void; reject: (err: unknown) => void }
  >();
  private draining = false;

  constructor(
    private readonly log: Logger,
    private readonly capacity = 20,
  ) {}

  get size(): number {
    return this.waiting.size;
  }

  enqueue(key: string, job: () => Promise<void>): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      const replaced = this.waiting.get(key);
      if (replaced) {
        replaced.job = job;
        replaced.resolve();
        replaced.resolve = resolve;
        replaced.reject = reject;
      } else {
        this.waiting.set(key, { job, resolve, reject });
        if (this.waiting.size > this.capacity) {
          const [oldest, entry] = this.waiting.entries().next().value as [string, { resolve: () => void }];
          this.waiting.delete(oldest);
          entry.resolve();
          this.log.warn({ preview: oldest }, "a waiting preview was dropped: too many pull requests waiting");
        }
      }
      void this.drain();
    });
  }

  private async drain(): Promise<void> {
    if (this.draining) return;
    this.draining = true;
    try {
      for (let next = this.waiting.entries().next(); !next.done; next = this.waiting.entries().next()) {
        const [key, entry] = next.value;
        this.waiting.delete(key);
        try {
          await entry.job();
          entry.resolve();
        } catch (err) {
          entry.reject(err);
        }
      }
    } finally {
      this.draining = false;
    }
  }
}

/**
 * Every Secret that exists live reads the same in a preview whether its values changed or not:
 * one "skipped" row each, no drifted paths, and totals and the message counted without them.
 */
export function blindSecrets(result: SyncResult, plan: Plan): SyncResult {
  const isSecretRow = (r: ResourceResult) => r.kind === "Secret" && r.group === "";
  const existing = [...plan.steps.flatMap((s) => s.tasks), ...plan.unchanged].filter(
    (t) => t.live !== undefined && t.obj.kind === "Secret" && (t.obj.apiVersion ?? "") === "v1",
  );
  const where = (namespace: string | undefined, name: string) => `${namespace ?? ""}/${name}`;
  const existingNames = new Set(existing.map((t) => where(t.obj.metadata.namespace, t.obj.metadata.name)));
  const kept = result.resources.filter(
    (r) =>
      !(
        isSecretRow(r) &&
        (r.action === "configured" || r.action === "unchanged") &&
        existingNames.has(where(r.namespace, r.name))
      ),
  );
  const hidden: ResourceResult[] = existing.map((t) => {
    const key = keyOf(t.obj);
    return {
      group: "",
      kind: "Secret",
      namespace: key.namespace ?? "",
      name: key.name,
      status: "Skipped",
      action: "skipped",
      message: `${kubectlName(key)}: ${SECRET_NOT_COMPARED}`,
    };
  });
  const resources = [...kept, ...hidden];
  const count = (action: ResourceResult["action"]) => resources.filter((r) => r.action === action).length;
  const totals = {
    ...result.totals,
    created: count("created"),
    configured: count("configured"),
    skipped: count("skipped"),
    unchanged: count("unchanged"),
  };
  const message =
    result.phase === "Succeeded"
      ? `would create ${totals.created}, change ${totals.configured}, prune ${count("would prune")}; ${hidden.length} existing Secret(s) not compared`
      : result.message;
  return { ...result, resources, totals, message };
}

/** Counts for a preview's title, with existing Secrets left out (see blindSecrets). */
function previewTitle(result: SyncResult, plan: Plan): string {
  const rows = result.resources;
  const n = (action: ResourceResult["action"]) => rows.filter((r) => r.action === action).length;
  const secrets = rows.filter((r) => r.kind === "Secret" && r.action === "skipped").length;
  const created = n("created");
  const changed = n("configured");
  const pruned = plan.prunes.length;
  return `Preview: ${created} to create, ${changed} to change, ${pruned} to prune${secrets > 0 ? ` (${secrets} Secret(s) not compared)` : ""}`;
}

/** Runs one preview of `envName` and sends its check run. */
export async function preview(
  rt: RepoRuntime,
  gh: Octokit,
  envName: string,
  target: PreviewTarget,
): Promise<void> {
  const controller = rt.reconciler.controller(envName);
  const { head, revision } = target;
  // The first line names the pull request's head and base; the test merge is only how it is computed.
  const what =
    target.pull !== undefined
      ? ""
      : revision === head
        ? `What merging this pull request would change in **${envName}** (its head commit \`${head.slice(0, 7)}\`).`
        : `What merging this pull request would change in **${envName}** (its head \`${head.slice(0, 7)}\` merged into the base branch).`;
  const intro = [what, target.note ?? ""].filter(Boolean);
  try {
    const dryRun = await controller.sync({ trigger: "comment", actor: "preview", revision, dryRun: true });
    const { assessment } = await controller.inspect(revision);
    const plan = assessment.plan;
    const result = blindSecrets(dryRun, plan);
    const diff = environmentDiff(plan, controller.env, { blindSecrets: true });
    const warnings = [
      plan.refusal ? `:warning: ${inertText(plan.refusal)}` : "",
      plan.requiresPruning.length > 0
        ? `:information_source: ${plan.requiresPruning.length} object(s) would require pruning (prune is off)`
        : "",
    ].filter(Boolean);
    await rt.reporter.check(gh, envName, head, {
      preview: true,
      ...(target.pull ? { previewOf: target.pull } : {}),
      result,
      diff,
      title: previewTitle(result, plan),
      note: [...intro, ...warnings].join("\n\n"),
      conclusion: plan.refusal || result.phase !== "Succeeded" ? "failure" : "neutral",
    });
  } catch (err) {
    if (err instanceof SourceError) {
      await rt.reporter.check(gh, envName, head, {
        preview: true,
        ...(target.pull ? { previewOf: target.pull } : {}),
        next: "fix the render error in the pull request and push; the preview runs again.",
        problems: err.problems,
        note: [
          ...intro,
          `The manifests do not render; merging would apply nothing to **${envName}**.\n\n${fenced(err.message)}`,
        ].join("\n\n"),
      });
      return;
    }
    if (err instanceof ValidationError) {
      await rt.reporter.check(gh, envName, head, {
        preview: true,
        ...(target.pull ? { previewOf: target.pull } : {}),
        next: "fix the policy violations above in the pull request and push; the preview runs again.",
        note: [
          ...intro,
          `Policy violations: nothing would be applied to **${envName}**.\n\n${err.problems.map((p) => `- ${inertText(p)}`).join("\n")}`,
        ].join("\n\n"),
        conclusion: "failure",
        title: "Policy violations",
      });
      return;
    }
    throw err;
  }
}
