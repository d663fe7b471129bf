// `/promote <env>` and `syncward app promote <env>`: deploy to the environment the commit its
// upstream runs now, once every upstream has proven it, through the same gate as any release (a
// gated environment still waits for approval). What moved and what still waits is the answer.
import type { EnvironmentConfig } from "../../config/types.ts";
import type { SyncOutcome } from "../../engine/sync.ts";
import type { PromotionNote, Trigger } from "../../state/types.ts";
import type { EnvironmentController } from "../environment-controller.ts";
import type { GateDecision } from "../gate-decision.ts";
import type { RevisionSource } from "../revision-source.ts";
import type { Promotion } from "./promotion.ts";

export type PromoteResult =
  /** Nothing was started: why, in words for the requester. */
  | { refusal: string }
  | {
      revision: string;
      note: PromotionNote;
      /** The environment runs it already: nothing to do. */
      already?: boolean;
      /** A gated environment: the sync waits for an approval of `revision`. */
      held?: boolean;
      /** The gate refused it (a freeze, a window): why. */
      refused?: string;
      /** The sync's outcome, when it ran here (absent: waiting, or started in the background). */
      outcome?: SyncOutcome & { handedOver?: boolean; held?: GateDecision };
      /** The branch head, when newer than what moved and not proven yet: what it waits for. */
      headWaits?: { head: string; waiting: string };
    };

type Controller = Pick<EnvironmentController, "sync" | "requestApprovedSync" | "rules">;

export async function promoteWith(
  promotion: Promotion | undefined,
  controller: Controller,
  source: RevisionSource,
  env: EnvironmentConfig,
  request: { trigger: Trigger; actor: string; actorId?: number; reason: string; fromGitHub: boolean },
): Promise<PromoteResult> {
  if (!promotion || !env.promotion)
    return {
      refusal: `${env.name} has no promotion configured (promotion.after in .github/syncward.yml), so there is no upstream to promote from`,
    };
  const found = await promotion.promotable(request.reason);
  if ("refusal" in found) return { refusal: `nothing was promoted to ${env.name}: ${found.refusal}` };
  const { revision, note } = found;
  const head = await source.head(env.source.branch);
  const headWaits =
    head === revision ? undefined : await promotion.evidenceOf(head).then((e) => (e.proven ? undefined : e));
  const waits = headWaits ? { headWaits: { head, waiting: headWaits.text } } : {};
  if (request.fromGitHub && (await controller.rules()).approval) {
    const asked = await controller.requestApprovedSync({
      trigger: request.trigger,
      actor: request.actor,
      ...(request.actorId === undefined ? {} : { actorId: request.actorId }),
      revision,
      promotion: note,
    });
    return {
      revision,
      note,
      held: asked.held,
      ...(asked.refused ? { refused: asked.refused } : {}),
      ...waits,
    };
  }
  const outcome = await controller.sync({
    trigger: request.trigger,
    actor: request.actor,
    revision,
    needsApproval: request.fromGitHub,
    promotion: note,
  });
  return { revision, note, outcome, ...waits };
}
