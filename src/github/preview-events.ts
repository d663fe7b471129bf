// Webhooks as previews hear them: the pull request's own events, and `/preview` comments. A
// failure here is logged and never fails the delivery's other work (config checks, diff previews).
import { ConfigError } from "../config/load.ts";
import { parseCommands } from "./commands.ts";
import { repoInfo } from "./handlers.ts";
import type { Octokit } from "./octokit.ts";
import { pullViewOf } from "./preview-facts.ts";
import type { PreviewManager } from "./preview-manager.ts";
import { ProjectRefusal } from "./project-refusal.ts";
import type { RepoRuntime, Runtimes } from "./runtime.ts";

type RepoPayload = Parameters<typeof repoInfo>[0];

async function runtime(runtimes: Runtimes, payload: RepoPayload): Promise<RepoRuntime | undefined> {
  try {
    return await runtimes.for(repoInfo(payload));
  } catch (err) {
    // The repository's own handlers report these; a preview only waits for them to be fixed.
    if (err instanceof ConfigError || err instanceof ProjectRefusal) return undefined;
    throw err;
  }
}

export async function onPullRequestPreviewEnvironment(
  runtimes: Runtimes,
  previews: PreviewManager,
  gh: Octokit,
  payload: RepoPayload & {
    action: string;
    pull_request: unknown;
    label?: { name: string };
    sender?: { login: string };
  },
): Promise<void> {
  // opened/synchronize/reopened: the config check and the diff preview just loaded the runtime
  // (or reported why not); asking again would read the config a second time.
  const loaded = ["opened", "synchronize", "reopened"].includes(payload.action);
  const info = repoInfo(payload);
  const rt = loaded ? runtimes.running(info.owner, info.repo) : await runtime(runtimes, payload);
  if (!rt?.config.previewEnvironments?.length) return;
  const pr = pullViewOf(payload.pull_request as Parameters<typeof pullViewOf>[0]);
  await previews
    .onPullRequest(rt, gh, payload.action, pr, payload.label?.name, payload.sender?.login)
    .catch((err) => rt.log.error({ err, pull: pr.number }, "a preview environment event failed"));
}

export async function onPreviewComment(
  runtimes: Runtimes,
  previews: PreviewManager,
  gh: Octokit,
  payload: RepoPayload & {
    comment: { body: string; user: { login: string; type: string } };
    issue: { number: number; pull_request?: unknown };
    sender: { type: string };
  },
): Promise<void> {
  if (!payload.issue.pull_request || payload.sender.type === "Bot" || payload.comment.user.type === "Bot")
    return;
  const asks = parseCommands(payload.comment.body, []).filter((c) => c.type === "preview");
  if (asks.length === 0) return;
  const rt = await runtime(runtimes, payload);
  if (!rt) return;
  for (const ask of asks)
    await previews
      .onCommand(rt, gh, payload.issue.number, payload.comment.user.login, ask.stop)
      .catch((err) => rt.log.error({ err, pull: payload.issue.number }, "a /preview command failed"));
}
