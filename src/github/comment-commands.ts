// PR comment commands: `/sync`, `/freeze`, `/unfreeze`, `/approve`, `/diff`, `/history`, `/promote`,
// `/rollback`, `/unpin`, `/help`.
// Each is acknowledged at once (eyes), authorized through the collaborator permission API, run,
// and answered (rocket or confused, plus a reply when there is something to say). Anyone without
// the permission gets a polite refusal and nothing happens.
//
// A comment's commands run in order, one after the other, but only when every one of them parses:
// one invalid line (a typo, an injection attempt, an invisible character, too many commands)
// refuses the whole comment, so a half-understood comment never acts.
import { environmentDiff } from "../engine/environment-diff.ts";
import { ValidationError } from "../engine/prepare.ts";
import type { EnvironmentController } from "../reconciler/environment-controller.ts";
import { SourceError } from "../source/errors.ts";
import { short } from "../util/short-sha.ts";
import { approveAs } from "./approve.ts";
import { allows, type Permission, permissionOf } from "./authorize.ts";
import { commandPermission } from "./command-permission.ts";
import { COMMANDS, defaultEnvironment, type ParsedCommand, parseCommands } from "./commands.ts";
import { explainFailure } from "./explain-error.ts";
import { helpNext, helpText } from "./help.ts";
import { historyReply } from "./history-reply.ts";
import { codeSpan, fenced, inertText } from "./markdown.ts";
import { withNext } from "./next-step.ts";
import type { Octokit } from "./octokit.ts";
import { forkPreviews, previewTarget } from "./preview.ts";
import { promoteCommand } from "./promote-command.ts";
import { checkName } from "./reporter.ts";
import { rollbackCommand, unpinCommand } from "./rollback-command.ts";
import type { RepoRuntime } from "./runtime.ts";
import { truncateBytes } from "./truncate.ts";

export interface CommentEvent {
  commentId: number;
  body: string;
  login: string;
  /** The commenter's GitHub user id: approvals bind people by id, not login. */
  userId: number;
  senderType: string;
  pullNumber: number;
  /** The pull request's author (approvals by the author are refused unless configured). */
  author?: string;
  authorId?: number;
  merged: boolean;
}

interface Outcome {
  ok: boolean;
  reply?: string;
  /** What the commenter can do next: the reply's closing line. */
  next?: string;
}

/** A command as the commenter would write it, in a code span. */
const cmd = (text: string) => codeSpan(text, 120);

/** Room kept for the Next line when a long reply is cut to GitHub's comment limit. */
const NEXT_ROOM = 1_000;

/**
 * The Next line of a comment answering several commands: the first failure's (what blocks the
 * commenter), else the last command's.
 */
function nextOf(outcomes: Outcome[]): string {
  const failed = outcomes.find((o) => !o.ok && o.next);
  return (
    failed?.next ?? outcomes.findLast((o) => o.next)?.next ?? `comment ${cmd("/help")} for every command.`
  );
}

export async function handleCommentCommands(
  rt: RepoRuntime,
  gh: Octokit,
  event: CommentEvent,
): Promise<void> {
  // The bot's own comments, and other bots', never drive it.
  if (event.senderType === "Bot" || event.login.endsWith("[bot]")) return;
  const envNames = rt.config.environments.map((e) => e.name);
  const commands = parseCommands(event.body, envNames);
  if (commands.length === 0) return;
  const repo = rt.ref;
  await gh.rest.reactions.createForIssueComment({ ...repo, comment_id: event.commentId, content: "eyes" });
  const invalid = commands.filter((c) => c.type === "invalid");
  const outcomes: Outcome[] = [];
  if (invalid.length > 0) {
    outcomes.push(refuseComment(invalid, commands.length));
  } else {
    const permission = await permissionOf(gh, repo, event.login);
    for (const command of commands) {
      try {
        outcomes.push(await runCommand(rt, gh, event, command, permission, envNames));
      } catch (err) {
        // Whatever failed, the person who asked hears why instead of a silent 👀.
        rt.log.error({ err, command: command.type, pull: event.pullNumber }, "a comment command failed");
        const explained = explainFailure(err, `/${command.type}`);
        outcomes.push({ ok: false, reply: explained.what, next: explained.next });
      }
    }
  }
  const ok = outcomes.every((o) => o.ok);
  const replies = outcomes.map((o) => o.reply).filter((r): r is string => Boolean(r));
  if (replies.length > 0) {
    await gh.rest.issues.createComment({
      ...repo,
      issue_number: event.pullNumber,
      body: withNext(truncateBytes(replies.join("\n\n---\n\n"), 65536 - NEXT_ROOM), nextOf(outcomes)),
    });
  }
  await gh.rest.reactions.createForIssueComment({
    ...repo,
    comment_id: event.commentId,
    content: ok ? "rocket" : "confused",
  });
}

/**
 * The answer to a comment with invalid lines: each problem with its did-you-mean, and that
 * nothing ran. Short: a typo gets its correction, not the whole help (`/help` has that).
 */
function refuseComment(invalid: Array<Extract<ParsedCommand, { type: "invalid" }>>, total: number): Outcome {
  const problems = invalid.map((c) => {
    const hint = c.suggestion ? ` Did you mean ${cmd(c.suggestion)}?` : "";
    return `${codeSpan(c.line)}: ${c.error}.${hint}`;
  });
  const nothing =
    total > invalid.length
      ? "Nothing in this comment was run (its other commands neither)."
      : "Nothing was run.";
  const fix = invalid.find((c) => c.suggestion)?.suggestion;
  return {
    ok: false,
    reply: [...problems, nothing].join("\n\n"),
    next:
      fix !== undefined
        ? `comment ${cmd(fix)}, or ${cmd("/help")} for every command.`
        : `correct the line and comment it again; ${cmd("/help")} lists every command.`,
  };
}

/** The command's environment, or the question which (defaultEnvironment decides, as help says). */
function pickEnvironment(command: { env?: string }, envNames: string[], line: string): string | Outcome {
  if (command.env) return command.env;
  const only = defaultEnvironment(envNames);
  if (only !== undefined) return only;
  if (envNames.length === 0)
    return {
      ok: false,
      reply: "No environments are configured in `.github/syncward.yml` on the default branch.",
      next: "add an environment to `.github/syncward.yml` on the default branch.",
    };
  return {
    ok: false,
    reply: `Which environment? This repository has ${envNames.length}: ${envNames.map((n) => `\`${n}\``).join(", ")}; a command without one does not run.`,
    next: `comment ${cmd(`${line} ${envNames[0]}`)} (or another environment's name).`,
  };
}

async function runCommand(
  rt: RepoRuntime,
  gh: Octokit,
  event: CommentEvent,
  command: ParsedCommand,
  permission: Permission,
  envNames: string[],
): Promise<Outcome> {
  if (command.type === "invalid") return refuseComment([command], 1);
  if (command.type === "help")
    return { ok: true, reply: helpText(rt.config.environments), next: helpNext(rt.config.environments) };
  // The preview manager answers /preview (in the pull request's preview comment, or a reply).
  if (command.type === "preview") return { ok: true };
  const picked = pickEnvironment(command, envNames, `/${command.type}`);
  if (typeof picked !== "string") return picked;
  const controller = rt.reconciler.controller(picked);
  // Listed approvers need only read permission: approve.ts decides, as for the Approve button.
  if (command.type === "approve") return approve(rt, gh, controller, event, permission);
  // /unapprove withdraws only the commenter's own approvals, which approve.ts let them give.
  if (command.type !== "unapprove") {
    const need = commandPermission(controller.env, COMMANDS[command.type].permission ?? "sync");
    if (!allows(permission, need)) return lacks(event, `/${command.type} ${picked}`, need, permission);
  }
  switch (command.type) {
    case "sync":
      return sync(controller, event, command, permission);
    case "freeze": {
      const held = await heldToStricter(controller, "freeze", event, permission);
      if (held) return held;
      await controller.setFreeze({ by: event.login, reason: command.reason });
      return {
        ok: true,
        reply: `**${picked}** is frozen by @${event.login}${command.reason ? `: ${codeSpan(command.reason, 200)}` : ""}. Automated sync and self-heal are off until \`/unfreeze ${picked}\`.`,
        next: `comment ${cmd(`/unfreeze ${picked}`)} when syncs may run again.`,
      };
    }
    case "unfreeze": {
      const held = await heldToStricter(controller, "unfreeze", event, permission);
      if (held) return held;
      const state = await rt.reconciler.store.load(controller.instance);
      if (!state.freeze)
        return {
          ok: true,
          reply: `**${picked}** is not frozen.`,
          next: `nothing to lift; ${cmd(`/history ${picked}`)} shows its last syncs.`,
        };
      await controller.setFreeze(undefined);
      return {
        ok: true,
        reply: `**${picked}** is unfrozen; its configured sync policy applies again.`,
        next: `comment ${cmd(`/sync ${picked}`)} to sync it now, or let its sync policy do it.`,
      };
    }
    case "unapprove": {
      const withdrawn = await controller.unapprove({
        login: event.login,
        ...(event.userId !== undefined ? { id: event.userId } : {}),
      });
      return withdrawn.length === 0
        ? {
            ok: true,
            reply: `@${event.login} has no approval of **${picked}** to withdraw.`,
            next: `nothing to withdraw; ${cmd(`/history ${picked}`)} shows what was deployed.`,
          }
        : {
            ok: true,
            reply: `@${event.login} withdrew their approval of ${withdrawn.map((sha) => `\`${short(sha)}\``).join(", ")} for **${picked}**; it no longer counts.`,
            next: `comment ${cmd(`/approve ${picked}`)} to approve again.`,
          };
    }
    case "diff":
      return diff(rt, gh, controller, event, permission);
    case "history":
      return history(rt, controller);
    case "promote": {
      const who = { login: event.login, id: event.userId };
      // Without promotion there is nothing to promote: refused before any state is read.
      if (!controller.env.promotion) return promoteCommand(controller, who);
      const held = await heldToStricter(controller, "sync", event, permission);
      return held ?? promoteCommand(controller, who);
    }
    case "rollback":
    case "unpin": {
      const held = await heldToStricter(controller, "rollback", event, permission, `/${command.type}`);
      if (held) return held;
      return command.type === "unpin"
        ? unpinCommand(controller, event)
        : rollbackCommand(controller, event, command.target, event.pullNumber);
    }
  }
}

function lacks(event: CommentEvent, what: string, need: Permission, permission: Permission): Outcome {
  return {
    ok: false,
    reply: `Sorry @${event.login}, \`${what}\` needs **${need}** permission on this repository and you have **${permission}**. Nothing was changed.`,
    next: `ask someone with **${need}** permission to comment ${cmd(what)}.`,
  };
}

/**
 * A pending config change that loosens a command's permission is held to the stricter of the
 * deployed and the new rule (read from the state, so asked only of those the config itself lets
 * through, and only for commands that change the environment; /approve's approvers are held to
 * the stricter approval rule in approve()).
 */
async function heldToStricter(
  controller: EnvironmentController,
  command: "sync" | "freeze" | "unfreeze" | "rollback",
  event: CommentEvent,
  permission: Permission,
  asked = `/${command}`,
): Promise<Outcome | undefined> {
  const need = commandPermission(await controller.rules(), command);
  return allows(permission, need)
    ? undefined
    : lacks(event, `${asked} ${controller.env.name}`, need, permission);
}

async function sync(
  controller: EnvironmentController,
  event: CommentEvent,
  command: { prune: boolean; force: boolean; allowEmpty?: boolean; confirmPrune?: boolean },
  permission: Permission,
): Promise<Outcome> {
  const name = controller.env.name;
  const forceNeeds = COMMANDS.sync.flagPermission?.force ?? "admin";
  if (command.force && !allows(permission, forceNeeds)) {
    return {
      ok: false,
      reply: `Sorry @${event.login}, \`/sync ${name} --force\` needs **${forceNeeds}** permission. Nothing was changed.`,
      next: `comment ${cmd(`/sync ${name}`)} without \`--force\`, or ask someone with **${forceNeeds}** permission to run it.`,
    };
  }
  const held = await heldToStricter(controller, "sync", event, permission);
  if (held) return held;
  if ((await controller.rules()).approval) {
    const { revision, held, refused } = await controller.requestApprovedSync({
      trigger: "comment",
      actor: event.login,
      actorId: event.userId,
      prune: command.prune || undefined,
      force: command.force,
      allowEmpty: command.allowEmpty,
      confirmPrune: command.confirmPrune,
    });
    if (refused)
      return {
        ok: false,
        reply: `**${name}**: ${inertText(refused)}. Nothing was changed.`,
        next: `once what the message names is resolved, comment ${cmd(`/sync ${name}`)} again.`,
      };
    if (held) {
      return {
        ok: true,
        reply: `**${name}** requires approval: syncing \`${short(revision)}\` waits for \`/approve ${name}\` from an approver.`,
        next: `an approver comments ${cmd(`/approve ${name}`)} (or clicks **Approve** on the check run \`${checkName(name)}\`); ${cmd("/help")} lists who may.`,
      };
    }
    return {
      ok: true,
      reply: `**${name}**: \`${short(revision)}\` is approved; syncing.`,
      next: `the check run \`${checkName(name)}\` shows the result.`,
    };
  }
  const outcome = await controller.sync({
    trigger: "comment",
    actor: event.login,
    prune: command.prune || undefined,
    force: command.force,
    ignoreFreeze: command.force,
    allowEmpty: command.allowEmpty,
    confirmPrune: command.confirmPrune,
  });
  if (outcome.handedOver)
    return {
      ok: true,
      reply: `**${name}**: syncing \`${short(outcome.revision)}\`; the replica of syncward that holds the lease runs it, and the check run \`${checkName(name)}\` shows the result.`,
      next: `the check run \`${checkName(name)}\` shows the result.`,
    };
  const ok = outcome.phase === "Succeeded";
  if (outcome.held)
    return {
      ok,
      reply: `**${name}**: ${inertText(outcome.message)}. Nothing was changed.`,
      next: `once what held it is resolved, comment ${cmd(`/sync ${name}`)} again.`,
    };
  return {
    ok,
    reply: `**${name}**: sync of \`${short(outcome.revision)}\` ${ok ? "succeeded" : outcome.phase.toLowerCase()}: ${inertText(outcome.message)}`,
    next: ok
      ? `${cmd(`/history ${name}`)} lists it with the earlier syncs.`
      : `fix what the message names, then comment ${cmd(`/sync ${name}`)} again; ${cmd(`/diff ${name}`)} shows what a sync would change.`,
  };
}

async function approve(
  rt: RepoRuntime,
  gh: Octokit,
  controller: EnvironmentController,
  event: CommentEvent,
  permission: Permission,
): Promise<Outcome> {
  const outcome = await approveAs(
    rt,
    gh,
    controller,
    { login: event.login, id: event.userId, bot: event.senderType === "Bot", permission },
    {
      kind: "comment",
      pullNumber: event.pullNumber,
      ...(event.author !== undefined && event.authorId !== undefined
        ? { pullAuthor: { login: event.author, id: event.authorId } }
        : {}),
    },
  );
  return { ok: outcome.ok, reply: outcome.message, next: approveNext(controller.env.name, outcome) };
}

/** What the approver can do after `/approve`, from what approveAs decided. */
function approveNext(name: string, outcome: Awaited<ReturnType<typeof approveAs>>): string {
  if (outcome.released) return `the check run \`${checkName(name)}\` shows the deployment.`;
  if (outcome.waitsForProof)
    return `nothing to do: it deploys once its upstreams have proven it; the check run \`${checkName(name)}\` shows their evidence.`;
  if (outcome.message.includes("does not end the pin"))
    return `${cmd(`/unpin ${name}`)} once the branch is fit to deploy again (${cmd(`/history ${name}`)} says why it was rolled back), then approve again if it still waits.`;
  if (outcome.recorded && outcome.ok)
    return `another approver comments ${cmd(`/approve ${name}`)}; ${cmd("/help")} lists who may.`;
  if (outcome.message.startsWith("Sorry"))
    return `someone else who may approve comments ${cmd(`/approve ${name}`)}; ${cmd("/help")} lists who may.`;
  if (outcome.message.includes("would be stale"))
    return `approve on the pull request of the waiting commit, or with the **Approve** button of its check run \`${checkName(name)}\`.`;
  if (outcome.message.includes("does not require approval"))
    return `comment ${cmd(`/sync ${name}`)} to sync it.`;
  return `${cmd(`/history ${name}`)} shows what is deployed.`;
}

async function diff(
  rt: RepoRuntime,
  gh: Octokit,
  controller: EnvironmentController,
  event: CommentEvent,
  permission: Permission,
): Promise<Outcome> {
  const name = controller.env.name;
  let revision: string | undefined;
  let note = "";
  if (!event.merged) {
    // What merging would do: GitHub's test merge, as in the automatic previews.
    const target = await previewTarget(gh, rt.ref, event.pullNumber);
    if (target.fork) {
      // The operator's rule, or the project's floor (forkPreviews: never): no repository widens either.
      if (forkPreviews() === "never" || controller.env.project?.forkPreviews === "never")
        return {
          ok: false,
          reply: `Sorry @${event.login}, this syncward does not preview pull requests from forks against the live cluster. Nothing was run.`,
          next: "read the pull request's changes on GitHub; after the merge, the environment's check run shows what its sync changed.",
        };
      if (!allows(permission, "write"))
        return {
          ok: false,
          reply: `Sorry @${event.login}, \`/diff ${name}\` on a pull request from a fork needs **write** permission on this repository and you have **${permission}**. Nothing was run.`,
          next: `ask someone with **write** permission to comment ${cmd(`/diff ${name}`)}.`,
        };
    }
    revision = target.revision;
    note = target.note ? `${target.note}\n\n` : "";
  }
  try {
    const { revision: sha, assessment } = await controller.inspect(revision);
    // Everyone who can read the pull request reads the reply: Secret values are not compared.
    const text = environmentDiff(assessment.plan, controller.env, { blindSecrets: true });
    if (!text)
      return {
        ok: true,
        reply: `${note}**${name}** at \`${short(sha)}\`: no differences with the live cluster (Secret values are not compared).`,
        next: "nothing to sync: the cluster already matches.",
      };
    return {
      ok: true,
      reply: `${note}**${name}** at \`${short(sha)}\` vs the live cluster (Secret values are not compared):\n\n<details><summary>Diff</summary>\n\n${fenced(truncateBytes(text, 60_000), "diff")}\n</details>`,
      next: event.merged
        ? `comment ${cmd(`/sync ${name}`)} to apply it.`
        : `after the merge, **${name}** takes it under its sync policy, or comment ${cmd(`/sync ${name}`)} then.`,
    };
  } catch (err) {
    if (err instanceof SourceError || err instanceof ValidationError) {
      return {
        ok: false,
        reply: `**${name}**: the manifests are invalid, nothing would be applied:\n\n${fenced(truncateBytes(err.message, 60_000))}`,
        next: `fix the manifests the message names and push; then comment ${cmd(`/diff ${name}`)} again.`,
      };
    }
    throw err;
  }
}

async function history(rt: RepoRuntime, controller: EnvironmentController): Promise<Outcome> {
  const state = await rt.reconciler.store.load(controller.instance);
  if (state.history.length === 0)
    return {
      ok: true,
      reply: `**${controller.env.name}** has no history yet.`,
      next: `comment ${cmd(`/sync ${controller.env.name}`)} for its first sync.`,
    };
  return {
    ok: true,
    reply: historyReply(controller.env.name, state.history, { repoUrl: rt.info.htmlUrl }),
    next: `comment ${cmd(`/diff ${controller.env.name}`)} to compare the live cluster with Git now.`,
  };
}
