// The `syncward / config` check run: a configuration that cannot be used is reported at file and
// line on the commit that carries it (a push to the default branch), and a pull request that
// changes the configuration gets its version checked before merge, with what merging would
// change per environment and which guards it loosens. The check never deploys anything: the
// configuration that counts is always the default branch's.
import { configChanges, type EnvironmentChange } from "../config/config-changes.ts";
import { ConfigError, parseConfig } from "../config/load.ts";
import type { SyncwardConfig } from "../config/types.ts";
import { unknownUsers, unreadableTeams } from "./authorize.ts";
import { codeSpan, fenced, inertText } from "./markdown.ts";
import type { Octokit, RepoRef } from "./octokit.ts";
import { isConfigPath, readConfigText } from "./runtime.ts";
import { annotationsFor } from "./summary.ts";
import { truncateBytes } from "./truncate.ts";

export const CONFIG_CHECK = "syncward / config";

type Conclusion = "success" | "failure" | "neutral";

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
    summary: `syncward did not act: fix the configuration.\n\n${fenced(err.message)}`,
    problems: problemsOf(err),
  });
}

/** The per-environment account of a change, in markdown. */
export function configChangesText(file: string, changes: EnvironmentChange[]): string {
  if (changes.length === 0) return `${codeSpan(file)} is valid. Merging it changes no environment.`;
  const sections = changes.map((c) => {
    const lines = [
      `#### ${inertText(c.env)} (${c.kind})`,
      "",
      ...c.fields.map((f) => `- ${codeSpan(f, 300)}`),
    ];
    return lines.join("\n");
  });
  return [
    `${codeSpan(file)} is valid. What merging it changes, per environment (the default branch's configuration applies until then):`,
    ...loosenings(changes),
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
      summary:
        "This pull request removes syncward's configuration: once merged, syncward stops syncing every environment of this repository. Their objects stay in the cluster, unmanaged.",
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
      summary: `Merging this would leave syncward without a usable configuration: it would act on nothing until fixed.\n\n${fenced(err.message)}`,
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
      summary: `Merging this would have every sync of these environments refused by the operator's project:\n\n${outside.map((o) => `- ${codeSpan(o, 300)}`).join("\n")}`,
    });
    return;
  }
  const changes = configChanges(base, after);
  const loosened = changes.filter((c) => c.weakens.length > 0).map((c) => c.env);
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
  const unreadable = [...teamProblems, ...userProblems];
  const teamText =
    unreadable.length > 0
      ? `\n\n:warning: **Approvers syncward cannot resolve** (an approval by any of them would be refused):\n${unreadable.map((t) => `- ${codeSpan(t, 300)}`).join("\n")}`
      : "";
  await sendCheck(gh, repo, pull.head, {
    conclusion:
      userProblems.length > 0
        ? "failure"
        : loosened.length > 0 || unreadable.length > 0
          ? "neutral"
          : "success",
    title:
      userProblems.length > 0
        ? `${userProblems.length} listed approver(s) are no GitHub account or no collaborator`
        : loosened.length > 0
          ? `Valid; loosens the guards of ${loosened.join(", ")}`
          : unreadable.length > 0
            ? `Valid; ${unreadable.length} approver(s) cannot be resolved`
            : `Valid; changes ${changes.length} environment(s)`,
    summary: `${configChangesText(proposed.path, changes)}${teamText}`,
  });
}
