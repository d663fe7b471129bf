// The markdown answer to `/help`, rendered from the parser's own table (commands.ts COMMANDS:
// arguments, flags, which `commands` permission a command needs) and the environments as
// configured (their permissions and approvers), so it cannot promise what the parser or the
// handler does not do.
import type { EnvironmentConfig } from "../config/types.ts";
import { commandPermission } from "./command-permission.ts";
import {
  COMMAND_NAMES,
  COMMANDS,
  type CommandName,
  type CommandSpec,
  defaultEnvironment,
} from "./commands.ts";
import { codeSpan } from "./markdown.ts";

/** What help reads of an environment. */
export type HelpEnvironment = Pick<EnvironmentConfig, "name" | "commands" | "approval" | "floor">;

const envName = (e: { name: string }) => codeSpan(e.name, 60);

/** `[env] [--prune] ["reason"]`: exactly what the parser takes. */
function argumentsOf(spec: CommandSpec): string {
  const parts = [
    ...(spec.env ? ["[env]"] : []),
    ...Object.keys(spec.flags).map((f) => `[--${f}]`),
    ...(spec.argument ? [`[${spec.argument}]`] : []),
    ...(spec.text ? [`["${spec.text}"]`] : []),
  ];
  return parts.length === 0 ? "" : codeSpan(parts.join(" "), 200);
}

function doesOf(spec: CommandSpec): string {
  const flags = Object.entries(spec.flags).map(([flag, what]) => {
    const extra = spec.flagPermission?.[flag];
    return `\`--${flag}\`: ${what}${extra ? ` (needs **${extra}** permission)` : ""}.`;
  });
  return [spec.does, ...flags].join(" ");
}

/** One permission for every environment, or each environment's. */
function permissionOf(key: NonNullable<CommandSpec["permission"]>, envs: HelpEnvironment[]): string {
  const levels = new Map<string, string[]>();
  for (const e of envs) {
    const level = commandPermission(e, key);
    levels.set(level, [...(levels.get(level) ?? []), e.name]);
  }
  if (levels.size <= 1) {
    const [level] = levels.keys();
    return `**${level ?? "write"}** permission on the repository, or higher`;
  }
  return [...levels]
    .map(([level, names]) => `**${level}** on ${names.map((n) => envName({ name: n })).join(", ")}`)
    .join("; ");
}

/** Who approves each environment, as configured (logins as code: help mentions nobody). */
function approversOf(envs: HelpEnvironment[]): string {
  const each = envs.map((e) => {
    const rule = e.approval;
    if (!rule) return `${envName(e)}: needs no approval`;
    const listed = [...rule.users, ...rule.teams].map((who) => codeSpan(`@${who}`, 60));
    const count = `${rule.minimum} approval${rule.minimum === 1 ? "" : "s"}`;
    // The operator's floor holds every approver to a permission the repository cannot lower.
    const floor = e.floor
      ? `; **${e.floor.approverPermission}** permission at least, by the operator's floor`
      : "";
    return listed.length > 0
      ? `${envName(e)}: ${listed.join(", ")} (${count}${floor || "; read permission is enough"})`
      : `${envName(e)}: anyone with **${e.commands.approve}** permission (${count}${floor})`;
  });
  return [
    ...each,
    "never someone who contributed to what would be deployed (unless `allowAuthor`), never on a fork's pull request, never a bot",
  ].join("; ");
}

function whoOf(name: CommandName, spec: CommandSpec, envs: HelpEnvironment[]): string {
  if (name === "approve") return envs.length === 0 ? "the configured approvers" : approversOf(envs);
  if (spec.permission) return permissionOf(spec.permission, envs);
  return spec.who ?? "anyone";
}

/** What a command without an environment does: exactly what the handler does (defaultEnvironment). */
function environmentsLine(envs: HelpEnvironment[]): string {
  if (envs.length === 0)
    return "No environments are configured in `.github/syncward.yml` on the default branch.";
  const names = envs.map(envName).join(", ");
  const only = defaultEnvironment(envs.map((e) => e.name));
  return only !== undefined
    ? `Environments: ${names}. A command without an environment applies to ${envName({ name: only })}, the only one.`
    : `Environments: ${names}. Name one: a command without an environment is answered "Which environment?" and does not run.`;
}

/** Help for the PR commands, as markdown (the reply adds helpNext as its last line). */
export function helpText(environments: HelpEnvironment[]): string {
  const lines = [
    "#### syncward commands",
    "",
    "| Command | Arguments | What it does | Who may run it |",
    "| --- | --- | --- | --- |",
  ];
  for (const name of COMMAND_NAMES) {
    const spec = COMMANDS[name];
    // The cells are our own markdown (code spans, bold): only pipes need escaping.
    const cell = (text: string) => text.replaceAll("|", "\\|");
    lines.push(
      `| \`/${name}\` | ${cell(argumentsOf(spec))} | ${cell(doesOf(spec))} | ${cell(whoOf(name, spec, environments))} |`,
    );
  }
  lines.push(
    "",
    environmentsLine(environments),
    "",
    "Write one command per line, at the start of the line; names are case-insensitive. " +
      'Quote arguments that contain spaces (`/freeze prod "release night"`). ' +
      "Commands inside code blocks, quotes and HTML comments are ignored. " +
      "Permissions are checked against your repository role, not your association with the pull request.",
  );
  return lines.join("\n");
}

/** The Next line of `/help`: a first command that changes nothing. */
export function helpNext(environments: HelpEnvironment[]): string {
  const first = environments[0];
  return first === undefined
    ? "add an environment to `.github/syncward.yml` on the default branch."
    : `comment ${codeSpan(`/diff ${first.name}`, 80)} to see what a sync of ${codeSpan(first.name, 60)} would change.`;
}
