// The markdown answer to `/help` and to a mistyped command.
import { COMMAND_NAMES, type CommandName } from "./commands.ts";

interface CommandHelp {
  args: string;
  does: string;
  who: string;
}

// Defaults of the environment's `commands` permissions in `.github/syncward.yml`.
const WRITE = "people with write access to the repository (by default; see `commands` in the config)";
const READ = "anyone who can read the repository (by default; see `commands` in the config)";

const HELP: Record<CommandName, CommandHelp> = {
  sync: {
    args: "`[env] [--prune] [--force]`",
    does:
      "Sync the environment now. `--prune` deletes live objects no longer in Git; " +
      "`--force` deletes and re-creates objects whose immutable fields changed.",
    who: `${WRITE}; an environment with an \`approval\` rule also needs an approval for the commit`,
  },
  diff: {
    args: "`[env]`",
    does: "Show what a sync would change (secrets masked), without changing anything.",
    who: READ,
  },
  approve: {
    args: "`[env]`",
    does: "Approve syncing this pull request's commit (or click **Approve** on the environment's check run). Approvals are tied to that commit: a new push needs a new approval.",
    who:
      "the approvers listed in the environment's `approval` rule (read permission is enough), or, if it lists none, " +
      `${WRITE.charAt(0).toLowerCase()}${WRITE.slice(1)}; ` +
      "nobody who contributed to what would be deployed (authored, committed, pushed or merged a commit since the last sync, opened or merged its pull request, or asked for the sync) unless `allowAuthor` is set; not on a fork's pull request; never bots",
  },
  unapprove: {
    args: "`[env]`",
    does: "Withdraw your approvals of the environment's revisions that are not deployed yet.",
    who: "whoever approved (the same permission as `/approve`)",
  },
  freeze: {
    args: '`[env] ["reason"]`',
    does: "Stop all syncs of the environment, automated and manual, until it is unfrozen.",
    who: WRITE,
  },
  unfreeze: {
    args: "`[env]`",
    does: "Lift a freeze.",
    who: WRITE,
  },
  history: {
    args: "`[env]`",
    does: "List the last sync operations: revision, trigger, who, result.",
    who: READ,
  },
  help: {
    args: "",
    does: "Show this help.",
    who: "anyone",
  },
};

/**
 * Help for the PR commands, as markdown. `prefix` is a paragraph put above it, e.g. why help is
 * shown ("Unknown command `/snyc`; did you mean `/sync`?").
 */
export function helpText(environments: string[], prefix?: string): string {
  const lines: string[] = [];
  if (prefix !== undefined && prefix.trim() !== "") lines.push(prefix.trim(), "");
  lines.push(
    "#### syncward commands",
    "",
    "| Command | Arguments | What it does | Who may run it |",
    "| --- | --- | --- | --- |",
  );
  for (const name of COMMAND_NAMES) {
    const h = HELP[name];
    lines.push(`| \`/${name}\` | ${h.args} | ${h.does} | ${h.who} |`);
  }
  lines.push(
    "",
    environments.length === 0
      ? "No environments are configured in `.github/syncward.yml` on the default branch."
      : `Environments: ${environments.map((e) => `\`${e.replaceAll("|", "\\|")}\``).join(", ")}. ` +
          "Without one, the command applies to this pull request's default environment.",
    "",
    "Write one command per line, at the start of the line; names are case-insensitive. " +
      'Quote arguments that contain spaces (`/freeze prod "release night"`). ' +
      "Commands inside code blocks, quotes and HTML comments are ignored. " +
      "Permissions are checked against your repository role, not your association with the pull request.",
  );
  return lines.join("\n");
}
