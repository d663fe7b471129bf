// `/rollback <env> [id|commit]` and `/unpin <env>`: the reply says what moved and what happens
// next, or politely why nothing did. The deciding is the controller's (rollback, unpin), the
// same methods `syncward app rollback` and `app unpin` call.
import type { EnvironmentController } from "../reconciler/environment-controller.ts";
import type { RollbackTarget } from "../reconciler/pin.ts";
import type { PinRecord } from "../state/types.ts";
import { codeSpan, inertText } from "./markdown.ts";
import type { PromoteReply } from "./promote-command.ts";
import { checkName } from "./reporter.ts";

const short = (sha: string) => sha.slice(0, 7);
const cmd = (text: string) => codeSpan(text, 120);

/** Shaped as /promote's reply: whether it went, what it says, and its Next line. */
export type RollbackReply = PromoteReply;

type RollbackResult = Awaited<ReturnType<EnvironmentController["rollback"]>>;

export async function rollbackCommand(
  controller: EnvironmentController,
  who: { login: string },
  target: RollbackTarget | undefined,
  pullNumber: number,
): Promise<RollbackReply> {
  const result = await controller.rollback({
    actor: who.login,
    ...(target ? { target } : {}),
    reason: `/rollback on #${pullNumber}`,
  });
  const { name, branch, gated } = placeOf(controller);
  return rollbackReply(name, branch, result, gated);
}

/** The environment's name, its tracked branch, and whether an approval rule gates it. */
function placeOf(controller: EnvironmentController): { name: string; branch: string; gated: boolean } {
  const env = controller.env;
  return { name: env.name, branch: env.source.branch, gated: Boolean(env.approval) };
}

/**
 * The reply to a rollback's result (pure). `gated`: the environment has an approval rule, so an
 * approved newer commit of the branch ends the pin too.
 */
export function rollbackReply(
  name: string,
  branch: string,
  result: RollbackResult,
  gated = false,
): RollbackReply {
  const history = cmd(`/history ${name}`);
  if ("refused" in result)
    return {
      ok: false,
      reply: `Sorry, ${inertText(result.refused)}. Nothing was changed.`,
      next: `${history} lists the history ids and commits ${name} ran; comment ${cmd(`/rollback ${name} <id>`)} with one of them.`,
    };
  const pin = result.pin;
  // Refused before anything was pinned (a freeze, a closed window): the environment is as it was.
  if (!pin)
    return {
      ok: false,
      reply: `**${name}**: rolling back to \`${short(result.revision)}\` is ${inertText(result.message)}. Nothing was changed.`,
      next: `once what the message names is resolved, comment ${cmd(`/rollback ${name}`)} again.`,
    };
  const sha = `\`${short(pin.revision)}\``;
  const until = gated
    ? `${cmd(`/unpin ${name}`)}, or until an approval of a newer commit of \`${branch}\` deploys it and ends the pin`
    : cmd(`/unpin ${name}`);
  const held = `automated syncs, promotions and retries hold at ${sha} and self-heal defends it; new commits to \`${branch}\` wait until ${until}`;
  if (result.handedOver)
    return {
      ok: true,
      reply: `**${name}** is pinned at ${sha} (rollback to history ${pin.historyId}); the replica of syncward that holds the lease syncs it: ${held}.`,
      next: `the check run \`${checkName(name)}\` shows the result; comment ${cmd(`/unpin ${name}`)} to follow \`${branch}\` again.`,
    };
  if (result.phase !== "Succeeded")
    return {
      ok: false,
      reply: `**${name}** is pinned at ${sha} (rollback to history ${pin.historyId}), but its sync ${result.phase.toLowerCase()}: ${inertText(result.message)}\n\nThe pin stays: ${held}.`,
      next: `fix what the message names (the passes retry ${sha}), or comment ${cmd(`/unpin ${name}`)} to follow \`${branch}\` again.`,
    };
  return {
    ok: true,
    reply: `**${name}** rolled back to ${sha} (history ${pin.historyId}) and is pinned there: ${inertText(result.message)}\n\nWhile pinned, ${held}.`,
    next: `comment ${cmd(`/unpin ${name}`)} when \`${branch}\` is fit to deploy again; ${history} lists the rollback.`,
  };
}

export async function unpinCommand(
  controller: EnvironmentController,
  who: { login: string },
): Promise<RollbackReply> {
  const removed = await controller.unpin(who.login);
  const { name, branch, gated } = placeOf(controller);
  return unpinReply(name, branch, removed, gated);
}

/** The reply to an unpin (pure): what was pinned, and what the next sync takes. */
export function unpinReply(
  name: string,
  branch: string,
  removed: PinRecord | undefined,
  gated: boolean,
): RollbackReply {
  if (!removed)
    return {
      ok: true,
      reply: `**${name}** is not pinned.`,
      next: `nothing to unpin; ${cmd(`/rollback ${name}`)} re-deploys an earlier revision and pins it.`,
    };
  const approval = gated ? ", once it is approved" : "";
  return {
    ok: true,
    reply: `**${name}** is unpinned: it held \`${short(removed.revision)}\` (rollback to history ${removed.historyId} by ${codeSpan(removed.by, 60)}). The next sync takes the head of \`${branch}\`${approval}.`,
    next: gated
      ? `an approver comments ${cmd(`/approve ${name}`)} on the pull request of the head of \`${branch}\`; the check run \`${checkName(name)}\` shows what waits.`
      : `the check run \`${checkName(name)}\` shows the next sync; ${cmd(`/history ${name}`)} lists the unpin.`,
  };
}
