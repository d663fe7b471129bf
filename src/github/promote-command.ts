// `/promote <env>`: the reply says what moved (or waits for approval) and what still waits, or
// politely why nothing was promoted. The deciding is the controller's (reconciler/promotion).
import type { EnvironmentController } from "../reconciler/environment-controller.ts";
import type { PromoteResult } from "../reconciler/promotion/promote.ts";
import { codeSpan, inertText } from "./markdown.ts";
import { checkName } from "./reporter.ts";

const short = (sha: string) => sha.slice(0, 7);
const cmd = (text: string) => codeSpan(text, 120);

export interface PromoteReply {
  ok: boolean;
  reply: string;
  next: string;
}

export async function promoteCommand(
  controller: EnvironmentController,
  who: { login: string; id?: number },
): Promise<PromoteReply> {
  const name = controller.env.name;
  const result = await controller.promote({
    trigger: "comment",
    actor: who.login,
    ...(who.id === undefined ? {} : { actorId: who.id }),
    reason: `/promote ${name} by @${who.login}`,
    fromGitHub: true,
  });
  return promoteReply(name, result);
}

/** The reply to a promotion's result (pure). */
export function promoteReply(name: string, result: PromoteResult): PromoteReply {
  if ("refusal" in result)
    return {
      ok: false,
      reply: `Sorry, ${inertText(result.refusal)}. Nothing was changed.`,
      next: `${cmd(`/history ${name}`)} shows what ${name} runs; once its upstream has proven a commit, comment ${cmd(`/promote ${name}`)} again.`,
    };
  const sha = `\`${short(result.revision)}\``;
  const evidence = inertText(result.note.evidence.join(", "));
  const waits = result.headWaits
    ? `\n\nStill waiting: the branch head \`${short(result.headWaits.head)}\` (${inertText(result.headWaits.waiting)}).`
    : "";
  if (result.refused)
    return {
      ok: false,
      reply: `**${name}**: promoting ${sha} is ${inertText(result.refused)}. Nothing was changed.${waits}`,
      next: `once what the message names is resolved, comment ${cmd(`/promote ${name}`)} again.`,
    };
  if (result.held)
    return {
      ok: true,
      reply: `**${name}**: promoting ${sha} (${evidence}) waits for \`/approve ${name}\` from an approver.${waits}`,
      next: `an approver comments ${cmd(`/approve ${name}`)} (or clicks **Approve** on the check run \`${checkName(name)}\`).`,
    };
  const outcome = result.outcome;
  if (!outcome || outcome.handedOver)
    return {
      ok: true,
      reply: `**${name}**: promoting ${sha} (${evidence}); the check run \`${checkName(name)}\` shows the result.${waits}`,
      next: `the check run \`${checkName(name)}\` shows the result.`,
    };
  const ok = outcome.phase === "Succeeded";
  if (outcome.held)
    return {
      ok: false,
      reply: `**${name}**: promoting ${sha}: ${inertText(outcome.message)}. Nothing was changed.${waits}`,
      next: `once what held it is resolved, comment ${cmd(`/promote ${name}`)} again.`,
    };
  return {
    ok,
    reply: `**${name}**: promoted ${sha} (${evidence}): ${ok ? "synced" : outcome.phase.toLowerCase()}: ${inertText(outcome.message)}${waits}`,
    next: ok
      ? `${cmd(`/history ${name}`)} lists it with the evidence.`
      : `fix what the message names, then comment ${cmd(`/promote ${name}`)} again.`,
  };
}
