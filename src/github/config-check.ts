// The `syncward / config` check run: a configuration that cannot be used is reported at file and
// line on the commit that carries it (a push to the default branch), and a pull request that
// changes the configuration gets its version checked before merge, with what merging would
// change per environment and which guards it loosens. The check never deploys anything: the
// configuration that counts is always the default branch's.
import { configChanges, type EnvironmentChange } from "../config/config-changes.ts";
import { ConfigError, parseConfig } from "../config/load.ts";
import type { EnvironmentConfig, SyncwardConfig } from "../config/types.ts";
import { unknownUsers, unreadableTeams } from "./authorize.ts";
import { approversText, changeList, environmentChanges } from "./config-diff.ts";
import { codeSpan, fenced, inertText } from "./markdown.ts";
import { withNext } from "./next-step.ts";
import type { Octokit, RepoRef } from "./octokit.ts";
import { isConfigPath, readConfigText } from "./runtime.ts";
import { annotationsFor } from "./summary.ts";
import { truncateBytes } from "./truncate.ts";

export const CONFIG_CHECK = "syncward / config";

type Conclusion = "success" | "failure" | "neutral" | "action_required";

async function sendCheck(
  gh: Octokit,
  repo: RepoRef,
  sha: string,
  check: {
    conclusion: Conclusion;
    title: string;
    summary: string;
    problems?: Array<{ file: string; line?: number; message: string }>;
  },
): Promise<void> {
  const [first, ...rest] = annotationsFor(check.problems ?? []);
  const output = { title: truncateBytes(check.title, 255), summary: truncateBytes(check.summary, 65535) };
  const { data } = await gh.rest.checks.create({
    ...repo,
    name: CONFIG_CHECK,
    head_sha: sha,
    status: "completed",
    conclusion: check.conclusion,
    completed_at: new Date().toISOString(),
    output: { ...output, ...(first ? { annotations: first } : {}) },
  });
  for (const more of rest) {
    await gh.rest.checks.update({ ...repo, check_run_id: data.id, output: { ...output, annotations: more } });
  }
}

function problemsOf(err: ConfigError): Array<{ file: string; line?: number; message: string }> {
  return err.issues.map((i) => ({
    file: err.file,
    line: i.line,
    message: `${i.path ? `${i.path}: ` : ""}${i.message}`,
  }));
}

/** An invalid config is reported on the commit that carries it, at file and line; nothing syncs. */
export async function reportConfigError(
  gh: Octokit,
  repo: RepoRef,
  sha: string,
  err: ConfigError,
): Promise<void> {
  await sendCheck(gh, repo, sha, {
    conclusion: "failure",
    title: `Invalid ${err.file}: ${err.issues.length} problem(s)`,
    summary: withNext(
      `syncward did not act on this configuration: fix it. Until then the last valid configuration read from the default branch, if there was one, stays in force (with every guard it had).\n\n${fenced(err.message)}`,
      `fix ${codeSpan(err.file)} where the annotations point and push; the check runs again.`,
    ),
    problems: problemsOf(err),
  });
}

/** Environments by name. */
const byName = (config: SyncwardConfig | undefined) =>
  new Map((config?.environments ?? []).map((e) => [e.name, e]));

/** Production, or gated by an approval, before or after the change: its guards are what prod's are. */
const guarded = (...envs: Array<EnvironmentConfig | undefined>) =>
  envs.some((e) => e !== undefined && (e.production || e.approval !== undefined));

/**
 * The environments whose production guard the change loosens: a loosening (config-changes.ts
 * weakenedGuards) of an environment that is production or gated by an approval, before or after.
 */
export function productionLoosened(
  changes: EnvironmentChange[],
  before: SyncwardConfig | undefined,
  after: SyncwardConfig,
): string[] {
  const was = byName(before);
  const now = byName(after);
  return changes
    .filter(
      (c) =>
        c.weakens.length > 0 && (guarded(was.get(c.env), now.get(c.env)) || (c.intoGuarded?.length ?? 0) > 0),
    )
    .map((c) => c.env);
}

/**
 * The per-environment account of a change, in markdown: guards first (loosenings, who approves
 * each guarded environment), then every changed value by path.
 */
export function configChangesText(
  file: string,
  changes: EnvironmentChange[],
  before?: SyncwardConfig,
  after?: SyncwardConfig,
): string {
  if (changes.length === 0) return `${codeSpan(file)} is valid. Merging it changes no environment.`;
  const was = byName(before);
  const now = byName(after);
  const sections = changes.map((c) => {
    const lines =
      c.kind === "changed"
        ? changeList(environmentChanges(c.env, was.get(c.env), now.get(c.env)))
        : c.fields.map((f) => `- ${codeSpan(f, 300)}`).join("\n");
    return [`#### ${inertText(c.env)} (${c.kind})`, "", lines].join("\n");
  });
  return [
    `${codeSpan(file)} is valid. What merging it changes, per environment (the default branch's configuration applies until then):`,
    ...loosenings(changes),
    ...approvers(changes, was, now),
    ...sections,
  ].join("\n\n");
}

/**
 * Everything the change lets happen with fewer people's yes (a guard lowered, more live change
 * left alone), under its own heading: a gated environment takes it only with an approval under
 * the rule it deployed with.
 */
function loosenings(changes: EnvironmentChange[]): string[] {
  const loosened = changes.filter((c) => c.weakens.length > 0);
  if (loosened.length === 0) return [];
  return [
    [
      `### :warning: Loosenings (${loosened.reduce((n, c) => n + c.weakens.length, 0)})`,
      "",
      "Each lets more change without a person's yes. A gated environment applies it only after an approval under the rule it was deployed with.",
      "",
      ...loosened.flatMap((c) => c.weakens.map((w) => `- ${inertText(c.env)}: ${codeSpan(w, 200)}`)),
    ].join("\n"),
  ];
}

/** Who approves each guarded environment the change touches, before and after. */
function approvers(
  changes: EnvironmentChange[],
  was: Map<string, EnvironmentConfig>,
  now: Map<string, EnvironmentConfig>,
): string[] {
  const rows = changes
    .filter((c) => guarded(was.get(c.env), now.get(c.env)))
    .map((c) => {
      const before = approversText(was.get(c.env));
      const after = approversText(now.get(c.env));
      if (c.kind === "removed") return `- ${inertText(c.env)}: ${before}; after the merge, nobody (removed)`;
      if (c.kind === "added") return `- ${inertText(c.env)}: ${after} (new)`;
      return before === after
        ? `- ${inertText(c.env)}: ${after} (unchanged)`
        : `- ${inertText(c.env)}: now ${before}; after the merge ${after}`;
    });
  return rows.length === 0 ? [] : [["### Who approves", "", ...rows].join("\n")];
}

/**
 * Checks the configuration a pull request proposes, when it changes it. `current` is the default
 * branch's configuration (undefined when there is none or it is invalid).
 */
export async function checkPullRequestConfig(
  gh: Octokit,
  repo: RepoRef,
  pull: { number: number; head: string },
  current: () => Promise<SyncwardConfig | undefined>,
  /** The proposed config as the repository's project sees it (the current one already is). */
  underProject: (proposed: SyncwardConfig) => SyncwardConfig = (c) => c,
): Promise<void> {
  const files = await gh.paginate(gh.rest.pulls.listFiles, {
    ...repo,
    pull_number: pull.number,
    per_page: 100,
  });
  const touched = files.filter((f) => isConfigPath(f.filename) || isConfigPath(f.previous_filename ?? ""));
  if (touched.length === 0) return;
  const proposed = await readConfigText(gh, repo, pull.head);
  if (!proposed) {
    await sendCheck(gh, repo, pull.head, {
      conclusion: "neutral",
      title: "Configuration removed",
      summary: withNext(
        "This pull request removes syncward's configuration: once merged, syncward stops syncing every environment of this repository. Their objects stay in the cluster, unmanaged.",
        "restore `.github/syncward.yml` unless the repository should leave syncward.",
      ),
    });
    return;
  }
  let after: SyncwardConfig;
  try {
    after = parseConfig(proposed.text, proposed.path);
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    await sendCheck(gh, repo, pull.head, {
      conclusion: "failure",
      title: `Invalid ${err.file}: ${err.issues.length} problem(s)`,
      summary: withNext(
        `Merging this would leave syncward without a usable configuration: it would act on nothing until fixed.\n\n${fenced(err.message)}`,
        `fix ${codeSpan(err.file)} where the annotations point and push; the check runs again.`,
      ),
      problems: problemsOf(err),
    });
    return;
  }
  const base = await current();
  after = underProject(after);
  // What the operator's project would refuse once merged: every sync of those environments.
  const outside = after.environments.flatMap((e) =>
    (e.project?.violations ?? []).map((v) => `${e.name}: ${v}`),
  );
  if (outside.length > 0) {
    await sendCheck(gh, repo, pull.head, {
      conclusion: "failure",
      title: `Outside project ${after.environments[0]?.project?.name ?? ""}: ${outside.length} problem(s)`,
      summary: withNext(
        `Merging this would have every sync of these environments refused by the operator's project:\n\n${outside.map((o) => `- ${codeSpan(o, 300)}`).join("\n")}`,
        "keep the configuration inside the project's destinations, or ask the operator to widen the project.",
      ),
    });
    return;
  }
  // An approver team syncward cannot read, or a newly listed login no GitHub account has,
  // approves nothing: say so before it is relied on.
  const teams = after.environments.flatMap((e) => e.approval?.teams ?? []);
  const listedBefore = new Set(
    (base?.environments ?? []).flatMap((e) => e.approval?.users ?? []).map((u) => u.toLowerCase()),
  );
  const added = after.environments
    .flatMap((e) => e.approval?.users ?? [])
    .filter((u) => !listedBefore.has(u.toLowerCase()));
  const teamProblems = await unreadableTeams(gh, repo.owner, teams);
  // A listed login no account has, or whose account is no collaborator, would bind whoever
  // registers it or is given access later: the check fails until the list names real approvers.
  const userProblems = await unknownUsers(gh, added, repo);
  await sendCheck(
    gh,
    repo,
    pull.head,
    configCheckReport(proposed.path, base, after, teamProblems, userProblems),
  );
}

/**
 * The config check of a valid proposed configuration against the default branch's: what changes
 * per environment, loosenings first, and the approvers syncward could not resolve.
 */
export function configCheckReport(
  file: string,
  base: SyncwardConfig | undefined,
  after: SyncwardConfig,
  teamProblems: string[],
  userProblems: string[],
): { conclusion: Conclusion; title: string; summary: string } {
  const changes = configChanges(base, after);
  const loosened = changes.filter((c) => c.weakens.length > 0).map((c) => c.env);
  const unreadable = [...teamProblems, ...userProblems];
  const teamText =
    unreadable.length > 0
      ? `\n\n:warning: **Approvers syncward cannot resolve** (an approval by any of them would be refused):\n${unreadable.map((t) => `- ${codeSpan(t, 300)}`).join("\n")}`
      : "";
  const verdict = configVerdict({
    userProblems: userProblems.length,
    unreadable: unreadable.length,
    loosened,
    production: productionLoosened(changes, base, after),
    changed: changes.length,
  });
  return {
    conclusion: verdict.conclusion,
    title: verdict.title,
    summary: withNext(`${configChangesText(file, changes, base, after)}${teamText}`, verdict.next),
  };
}

/**
 * The check's conclusion and title. A loosened production guard (production removed, fewer
 * approvals, self-approval allowed, Validate=false, a wider namespace list on an environment that
 * is production or gated) is `action_required`, never green nor grey: the file is valid, so it is
 * no `failure` (there is nothing to fix in it), but a `success` or `neutral` check passes branch
 * protection and lets a guard drop with nobody but the reviewer having looked at it;
 * `action_required` does not satisfy a required check, so the loosening merges only by someone
 * who decides to (an admin's bypass, or a re-review once the check is not required), and the
 * title names what is loosened. Loosenings elsewhere (a dev environment's prune) stay neutral.
 */
export function configVerdict(o: {
  userProblems: number;
  unreadable: number;
  loosened: string[];
  production: string[];
  changed: number;
}): { conclusion: Conclusion; title: string; next: string } {
  if (o.userProblems > 0)
    return {
      conclusion: "failure",
      title: `${o.userProblems} listed approver(s) are no GitHub account or no collaborator`,
      next: "list approvers by their current GitHub logins (collaborators of this repository) and push.",
    };
  if (o.production.length > 0)
    return {
      conclusion: "action_required",
      title: `Loosens the production guards of ${o.production.join(", ")}`,
      next: `whoever owns ${o.production.join(", ")}'s guards decides: restore them, or merge knowing each listed loosening applies once an approval under the current rule deploys it.`,
    };
  if (o.loosened.length > 0)
    return {
      conclusion: "neutral",
      title: `Valid; loosens the guards of ${o.loosened.join(", ")}`,
      next: "review the loosenings above; merging applies them.",
    };
  if (o.unreadable > 0)
    return {
      conclusion: "neutral",
      title: `Valid; ${o.unreadable} approver(s) cannot be resolved`,
      next: "fix the approvers syncward cannot resolve, or grant the permission named, before relying on them.",
    };
  return {
    conclusion: "success",
    title: `Valid; changes ${o.changed} environment(s)`,
    next:
      o.changed > 0
        ? "merge; each environment listed takes the change under its sync policy."
        : "merge when ready; no environment changes.",
  };
}
