// Whose sync a pass is. A push webhook names the commit it brought, but the pass it asks for may
// find that commit already taken by a pass the machine started (a poll, a watch echo) between the
// branch moving and the webhook's turn: that pass is the push's sync, and its history says so.
import type { Trigger } from "../state/types.ts";

/** The last push a webhook (or another replica) announced for an environment's branch. */
export interface AnnouncedPush {
  revision: string;
  trigger: Trigger;
  actor: string;
}

/** Triggers that are syncward's own; a person's or a webhook's trigger is never rewritten. */
const MACHINE: ReadonlySet<Trigger> = new Set<Trigger>(["poll", "selfHeal"]);

/**
 * The trigger and actor a pass records: the announced push's when the machine's pass is about to
 * take that push's commit for the first time; the pass's own otherwise (a later pass at the same
 * commit is the machine's again).
 */
export function attributePass(
  pass: { trigger: Trigger; actor: string },
  head: string,
  lastSyncedRevision: string | undefined,
  announced: AnnouncedPush | undefined,
): { trigger: Trigger; actor: string } {
  if (!announced || !MACHINE.has(pass.trigger)) return pass;
  if (announced.revision !== head || head === lastSyncedRevision) return pass;
  return { trigger: announced.trigger, actor: announced.actor };
}
