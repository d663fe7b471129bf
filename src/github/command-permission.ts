// The repository permission a PR comment command needs in an environment: its `commands` entry,
// with one floor. `/rollback` and `/unpin` move a gated environment (one with an approval rule)
// without a fresh approval, so there they need at least what approving needs (`commands.approve`,
// itself raised by any operator floor): whoever may roll back could have approved the revision
// anyway. A repository's `commands.rollback` can raise that, never lower it. Pure.
import type { EnvironmentConfig } from "../config/types.ts";
import { allows, type Permission } from "./authorize.ts";
import type { CommandSpec } from "./commands.ts";

export type CommandPermissionKey = NonNullable<CommandSpec["permission"]>;

const higher = (a: Permission, b: Permission): Permission => (allows(a, b) ? a : b);

export function commandPermission(
  env: Pick<EnvironmentConfig, "commands" | "approval">,
  key: CommandPermissionKey,
): Permission {
  const configured = env.commands[key];
  if (key !== "rollback" || !env.approval) return configured;
  return higher(configured, env.commands.approve);
}
