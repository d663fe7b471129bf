// A sync refused because the environment's destination moved since its last sync, told as such.
// An environment without an approval rule keeps writing only the namespaces it last synced with
// until a sync under the new config succeeds (src/config/stricter.ts): a move of the destination
// namespace in one step is refused object by object with "namespace ... is not allowed". Said that
// way, nobody can tell what to do; this says what moved and the two steps that move it. Pure.
import type { EnvironmentConfig } from "../config/types.ts";
import type { EnvironmentState } from "../state/types.ts";

const REFUSED = /namespace "([^"]+)" is not allowed for environment /g;

/**
 * The message to show instead of `message` (a failed sync's) when it refuses the environment's
 * new destination namespace because the destination moved since the last sync; else undefined.
 */
export function destinationMoveMessage(
  env: Pick<EnvironmentConfig, "name" | "destination" | "approval">,
  state: Pick<EnvironmentState, "deployedRules" | "lastSyncedRevision">,
  message: string,
): string | undefined {
  const deployed = state.deployedRules;
  if (!deployed) return undefined;
  const refused = new Set([...message.matchAll(REFUSED)].map((m) => m[1] as string));
  const to = env.destination.namespace;
  if (!refused.has(to) || deployed.namespaces.includes(to)) return undefined;
  const from = deployed.destination?.namespace ?? deployed.namespaces[0];
  if (from === undefined || from === to) return undefined;
  const at = state.lastSyncedRevision ? ` (at ${state.lastSyncedRevision.slice(0, 7)})` : "";
  const others = [...refused].filter((n) => n !== to);
  return [
    `the destination of environment ${env.name} moved since its last sync${at}: namespace ${from} → ${to}.`,
    `Until a sync under the new config succeeds, ${env.name} writes only the namespaces it last synced with (${deployed.namespaces.join(", ") || "none"}), so nothing was applied to ${to}.`,
    "To move it, in two syncs:",
    `  1. keep destination.namespace: ${from}, add ${to} to policy.namespaces (${[...new Set([...deployed.namespaces, to])].join(", ")}), and sync;`,
    `  2. then set destination.namespace: ${to} and sync again.`,
    env.approval ? "" : "(An environment with an approval rule takes such a move with the approval.)",
    others.length > 0
      ? `Also refused: namespace ${others.join(", ")}, which policy.namespaces does not list.`
      : "",
  ]
    .filter(Boolean)
    .join("\n");
}
