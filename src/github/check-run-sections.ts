// The sections of a check run's output, each a pure function of engine and state values. Text
// someone else wrote (messages, names, values) is made inert; tables keep few columns and short
// cells so they fit GitHub's 900 px column.

import { SYNC_OPTION_DEFAULTS } from "../config/schema.ts";
import { destinationName, type EnvironmentConfig } from "../config/types.ts";
import type { ResourceResult } from "../engine/result.ts";
import type { RevertedChange } from "../engine/revert/trail.ts";
import type { HistoryEntry } from "../state/types.ts";
import { fitRows } from "./budget.ts";
import { commandPermission } from "./command-permission.ts";
import { shortMessage } from "./errors-section.ts";
import { code, codeCell, date, duration, inline, plural, shortObject } from "./format.ts";
import { approvalCounts } from "./headline.ts";
import { commitLink, type Links, pullLink } from "./links.ts";
import { clipChars, codeSpan, fenceFor, tableCell } from "./markdown.ts";
import type { ApprovalWait, CheckRunOutputInput, DriftFightAlert } from "./summary.ts";
import { byteLength, prefixByBytes } from "./truncate.ts";

/** What a preview row says of a Secret whose values it did not compare (see preview.ts). */
export const SECRET_NOT_COMPARED = "values are not compared in previews";

export function driftFightSection(alert: DriftFightAlert): string {
  const fence = fenceFor(alert.ignoreSnippet);
  return [
    `#### ⚠️ Drift fight on ${inline(alert.object)}`,
    "",
    `Self-heal re-applied it ${plural(alert.heals, "time")} in ${plural(alert.windowMinutes, "minute")}, ` +
      "and something in the cluster keeps changing it back.",
    "",
    `- **Fields:** ${alert.fields.map((f) => code(f)).join(", ") || "unknown"}`,
    `- **Changed by (field managers):** ${alert.managers.map((m) => code(m)).join(", ") || "unknown"}`,
    "",
    "If they should own these fields, add this to the environment in `.github/syncward.yml`:",
    "",
    `${fence}yaml`,
    alert.ignoreSnippet.replace(/\n+$/, ""),
    fence,
  ].join("\n");
}

/** Rows of the reverted table shown; the rest are counted (the history keeps them all). */
const MAX_REVERTED_ROWS = 30;

/** A pod template's path without the `/spec/template/spec` every Deployment shares. */
function shortPath(path: string): string {
  return path
    .replace(/^\/spec\/template\/spec\//, "…/")
    .replace(/^\/spec\/jobTemplate\/spec\/template\/spec\//, "…/");
}

/** What a self-heal reverted: three short columns (finding, field, who), live values folded below. */
export function revertedSection(reverted: RevertedChange[], envName: string): string {
  const risky = reverted.filter((r) => r.security);
  // Security-relevant rows first: they are what the reader must see.
  const ordered = [...risky, ...reverted.filter((r) => !r.security)];
  const shown = ordered.slice(0, MAX_REVERTED_ROWS);
  const rows = shown.map(
    (r) =>
      `| ${r.security ? `⚠️ ${tableCell(r.security, 60)}` : tableCell(r.kind, 20)} | ${codeCell(shortObject(r.object), 60)} ${codeCell(shortPath(r.path), 60)} | ${r.manager ? `${codeCell(r.manager, 40)} ${tableCell(r.operation ?? "", 20)}` : "unknown"}${r.at ? `, ${date(r.at)}` : ""} |`,
  );
  const values = shown.filter((r) => r.value !== undefined);
  const spoofed = reverted.filter((r) => r.spoofing);
  const more = ordered.length - shown.length;
  return [
    ...(spoofed.length > 0 ? [spoofingSection(spoofed), ""] : []),
    risky.length > 0
      ? `#### ⚠️ Self-heal reverted ${plural(risky.length, "security-relevant change")}`
      : "#### Self-heal reverted out-of-band changes",
    "",
    "| FINDING | FIELD | CHANGED BY |",
    "| --- | --- | --- |",
    ...rows,
    ...(more > 0
      ? ["", `_and ${plural(more, "more reverted field")}: comment \`/history ${envName}\`._`]
      : []),
    ...(values.length > 0
      ? [
          "",
          "<details><summary>Reverted live values (masked where secret)</summary>",
          "",
          ...values.map(
            (r) =>
              `- ${code(shortObject(r.object), 60)} ${code(shortPath(r.path), 80)}: ${codeSpan(r.value ?? "", 120)}`,
          ),
          "",
          "</details>",
        ]
      : []),
  ].join("\n");
}

/** Changes made under a trusted manager's name (or syncward's) that the name is not trusted for. */
function spoofingSection(spoofed: RevertedChange[]): string {
  return [
    `#### 🚨 Spoofing attempt: ${plural(spoofed.length, "change")} under a trusted manager's name`,
    "",
    "Field manager names are not authenticated: whoever made these used a trusted name for fields it is not trusted for. They were reverted; find who has write access to the object.",
    "",
    ...spoofed
      .slice(0, MAX_REVERTED_ROWS)
      .map((r) => `- ${code(shortObject(r.object))} ${code(r.path)}: ${inline(r.spoofing ?? "")}`),
  ].join("\n");
}

export function riskyOrphansSection(orphans: Array<{ object: string; risk?: string }>): string {
  const risky = orphans.filter((o) => o.risk);
  return [
    `#### ⚠️ ${plural(risky.length, "risky object")} not declared in Git`,
    "",
    ...risky.map((o) => `- ${code(o.object)}: ${inline(o.risk ?? "")}`),
    "",
    "Left alone (self-heal is the reset button, not the lock): delete them if nobody should have created them, and prevent them with admission control.",
  ].join("\n");
}

export function approvalSection(input: CheckRunOutputInput, wait: ApprovalWait): string {
  const rule = input.env.approval;
  const { have, need, missing } = approvalCounts(input, wait);
  const excluded = new Set((wait.excluded ?? []).map((l) => l.toLowerCase()));
  const given = new Set(have.map((l) => l.toLowerCase()));
  // Someone who already approved is named among those who did, not asked again.
  const approvers = [
    ...(rule?.users ?? [])
      .filter((u) => !excluded.has(u.toLowerCase()) && !given.has(u.toLowerCase()))
      .map((u) => `@${u}`),
    ...(rule?.teams ?? []).map((t) => (t.includes("/") ? `@${t}` : `team \`${t}\``)),
  ];
  const paragraph = [
    `${commitLink(wait.revision, input.links)} needs ${plural(need, "approval")} before it is synced to \`${input.env.name}\`` +
      ` (${have.length} so far${have.length > 0 ? `: ${have.map((a) => `@${a}`).join(", ")}` : ""}; **${missing} more** needed).`,
    ...(wait.gate?.reason ? [`Held: ${inline(wait.gate.reason)}.`] : []),
    ...(approvers.length > 0 && missing > 0 ? [`Approvers: ${approvers.join(", ")}.`] : []),
    ...(excluded.size > 0
      ? [`Cannot approve it, having contributed to it: ${[...excluded].map((l) => code(l)).join(", ")}.`]
      : []),
    "Nobody who contributed to what would be deployed may approve it. A new push needs new approvals.",
  ];
  return ["#### Waiting for approval", "", ...paragraph, ...rangeSection(wait, input.links)].join("\n");
}

/** Most commits listed in the approval section; the rest are counted. */
const MAX_RANGE_ROWS = 30;

/** The commits and pull requests an approval would deploy; everything written by people is inert. */
function rangeSection(wait: ApprovalWait, links: Links | undefined): string[] {
  if (wait.rangeError !== undefined)
    return ["", `_What would be deployed could not be read: ${inline(wait.rangeError)}._`];
  const range = wait.range;
  if (range === undefined) return [];
  const from = range.base === undefined ? "the first deployment" : commitLink(range.base, links);
  const rows = range.commits
    .slice(0, MAX_RANGE_ROWS)
    .map(
      (c) =>
        `| ${commitLink(c.sha, links)} | ${c.author ? codeCell(c.author, 40) : ""} | ${tableCell(c.title ?? "", 80)} |`,
    );
  const more = range.commits.length - rows.length;
  return [
    "",
    `#### What would be deployed (${plural(range.commits.length, "commit")} since ${from})`,
    "",
    "| COMMIT | AUTHOR | MESSAGE |",
    "| --- | --- | --- |",
    ...rows,
    ...(more > 0 ? ["", `_and ${plural(more, "more commit")}_`] : []),
    ...(range.pulls.length > 0
      ? [
          "",
          `Pull requests: ${range.pulls
            .map(
              (p) =>
                `${pullLink(p.number, links)}${p.title ? ` ${inline(clipChars(p.title, 80))}` : ""}${p.author ? ` by ${code(p.author)}` : ""}`,
            )
            .join("; ")}.`,
        ]
      : []),
    ...(range.unclaimed?.length
      ? [
          "",
          `Commits by addresses no GitHub account claims: ${range.unclaimed.map((a) => code(a)).join(", ")}.`,
        ]
      : []),
  ];
}

export function isUnchanged(r: ResourceResult): boolean {
  return r.status === "Synced" && r.action === "unchanged";
}

const RESOURCE_HEADER = [
  "| KIND | NAMESPACE | NAME | STATUS | HEALTH | MESSAGE |",
  "| --- | --- | --- | --- | --- | --- |",
];

/** Rows of the objects that changed, failed or were skipped: unchanged ones are only counted. */
export function resourceRows(resources: ResourceResult[]): string[] {
  return resources
    .filter((r) => !isUnchanged(r))
    .map(
      (r) =>
        `| ${tableCell(r.kind, 60)} | ${tableCell(r.namespace, 63)} | ${tableCell(r.name, 80)} | ${tableCell(statusOf(r))} | ${tableCell(r.health?.status ?? "")} | ${tableCell(shortMessage(messageOf(r)), 120)} |`,
    );
}

export function resourceTable(rows: string[]): string {
  return rows.length === 0 ? "" : [...RESOURCE_HEADER, ...rows].join("\n");
}

/** As many rows as fit, then how many more and where they are. */
export function resourceTableWithin(
  rows: string[],
  room: number,
  pointer: (n: number) => string,
): string | undefined {
  return fitRows(RESOURCE_HEADER, rows, room, pointer);
}

function statusOf(r: ResourceResult): string {
  return r.action === "would prune" ? `${r.status} (requires pruning)` : r.status;
}

function messageOf(r: ResourceResult): string {
  const health = r.health?.message;
  return health !== undefined && health !== "" && !r.message.includes(health)
    ? `${r.message} (${health})`
    : r.message;
}

/** Existing Secrets a preview did not compare, named (their rows say only "skipped"). */
export function secretsNotCompared(resources: ResourceResult[]): string {
  const blind = resources.filter(
    (r) => r.kind === "Secret" && r.action === "skipped" && r.message.endsWith(SECRET_NOT_COMPARED),
  );
  if (blind.length === 0) return "";
  const names = blind
    .slice(0, 20)
    .map((r) => `${code(`secret/${r.name}`, 80)}${r.namespace ? ` in ${code(r.namespace, 63)}` : ""}`);
  const more = blind.length - names.length;
  return `**${plural(blind.length, "Secret")} not compared** (a preview never compares Secret values, so changed and unchanged ones look alike): ${names.join(", ")}${more > 0 ? ` and ${more} more` : ""}.`;
}

export function diffDetails(diff: string, summary = "Diff"): string {
  const body = diff.replace(/\n+$/, "");
  const fence = fenceFor(body);
  return [`<details><summary>${summary}</summary>`, "", `${fence}diff`, body, fence, "", "</details>"].join(
    "\n",
  );
}

/**
 * The diff cut at a line to fit `room`, saying so where the reader looks first; `shown` is how
 * many characters of `diff` it holds (the text continues from there).
 */
export function diffWithin(
  diff: string,
  room: number,
  pointer: string,
  label = "Diff",
): { text: string; shown: number } | undefined {
  const summary = `${label} (cut: ${pointer})`;
  const overhead = byteLength(diffDetails("", summary)) + 16;
  if (room - overhead < 256) return undefined;
  let cut = prefixByBytes(diff, room - overhead);
  const nl = cut.lastIndexOf("\n");
  if (nl > 0) cut = cut.slice(0, nl + 1);
  return { text: diffDetails(cut, summary), shown: cut.length };
}

const HISTORY_HEADER = [
  "| ID | DATE | REVISION | TRIGGER | ACTOR | RESULT |",
  "| --- | --- | --- | --- | --- | --- |",
];

/** The revision cell names the commit's title next to its SHA, when history recorded it. */
export function historyRows(entries: HistoryEntry[], links: Links | undefined): string[] {
  return entries.map(
    (h) =>
      `| ${h.id} | ${tableCell(date(h.startedAt))} | ${commitLink(h.revision, links, { withTitle: true, cell: true, title: h.title })} | ${tableCell(h.trigger)} | ${tableCell(h.actor, 40)} | ${tableCell(h.result)} |`,
  );
}

export function historyTable(
  rows: string[],
  room = Number.POSITIVE_INFINITY,
  pointer = (_: number) => "",
): string | undefined {
  if (rows.length === 0) return "";
  return room === Number.POSITIVE_INFINITY
    ? [...HISTORY_HEADER, ...rows].join("\n")
    : fitRows(HISTORY_HEADER, rows, room, pointer);
}

const FULL_HISTORY_HEADER = [
  "| ID | FINISHED | REVISION | TRIGGER | ACTOR | RESULT | CHANGES | MESSAGE |",
  "| --- | --- | --- | --- | --- | --- | --- | --- |",
];

/** Every history entry, for the text: newest first, with counts and a short message. */
export function fullHistoryRows(entries: HistoryEntry[], links: Links | undefined): string[] {
  return entries.map((h) => {
    const c = h.counts;
    const changes = `+${c.created} ~${c.configured} -${c.pruned} !${c.failed}`;
    const message = h.drifted?.length ? `${h.message} (drifted: ${h.drifted.join(", ")})` : h.message;
    return `| ${h.id} | ${tableCell(date(h.finishedAt))} | ${commitLink(h.revision, links, { withTitle: true, cell: true, title: h.title })} | ${tableCell(h.trigger)} | ${tableCell(h.actor, 40)} | ${tableCell(h.result)} | ${changes} | ${tableCell(shortMessage(message), 100)} |`;
  });
}

export function fullHistoryWithin(
  rows: string[],
  room: number,
  pointer: (n: number) => string,
): string | undefined {
  return fitRows(["### History", "", ...FULL_HISTORY_HEADER], rows, room, pointer);
}

export function fullHistory(rows: string[]): string {
  return rows.length === 0 ? "" : ["### History", "", ...FULL_HISTORY_HEADER, ...rows].join("\n");
}

/** The environment's settings, with sync options only where they differ from the default. */
export function environmentSection(env: EnvironmentConfig): string {
  const p = env.syncPolicy;
  const dest = env.destination;
  const changed = Object.entries(p.syncOptions).filter(
    ([k, v]) => SYNC_OPTION_DEFAULTS[k as keyof typeof SYNC_OPTION_DEFAULTS] !== v,
  );
  const options =
    changed.length === 0
      ? "defaults"
      : `${changed.map(([k, v]) => code(`${k}=${String(v)}`)).join(", ")} (the rest at their defaults)`;
  const r = p.retry;
  const retry =
    r.limit === 0
      ? "none"
      : `${r.limit < 0 ? "unlimited" : plural(r.limit, "retry", "retries")}, backoff ${duration(r.backoff.duration)} × ${r.backoff.factor} up to ${duration(r.backoff.maxDuration)}`;
  const lines = [
    `### Environment \`${env.name}\``,
    "",
    `- **Source:** ${code(env.source.path)} on ${code(env.source.branch)}`,
    `- **Destination:** namespace \`${dest.namespace}\`, ${destinationName(dest) !== undefined ? `cluster \`${destinationName(dest)}\`` : dest.inCluster ? "in-cluster" : "current context"}`,
    `- **Sync options:** ${options}`,
    `- **Retry:** ${retry}`,
  ];
  if (env.commands !== undefined) {
    const byLevel = new Map<string, string[]>();
    for (const command of Object.keys(env.commands) as Array<keyof typeof env.commands>) {
      // What a command needs in effect: /rollback's floor included (command-permission.ts).
      const level = command === "approve" ? env.commands.approve : commandPermission(env, command);
      byLevel.set(level, [...(byLevel.get(level) ?? []), `/${command}`]);
    }
    lines.push(
      `- **Commands:** ${[...byLevel].map(([level, commands]) => `${commands.map((c) => code(c)).join(", ")} need ${level}`).join("; ")}`,
    );
  }
  if (p.pruneLimit !== undefined) lines.push(`- **Prune limit:** ${String(p.pruneLimit)}`);
  if (env.syncWindows.length > 0) {
    lines.push(
      `- **Sync windows:** ${env.syncWindows.map((w) => `${w.kind} \`${w.schedule}\` for ${duration(w.duration)} (${w.timeZone})`).join("; ")}`,
    );
  }
  if (env.approval !== undefined) {
    const who = [
      ...env.approval.users.map((u) => `@${u}`),
      ...env.approval.teams.map((t) => `team \`${t}\``),
    ];
    lines.push(
      `- **Approval:** ${plural(env.approval.minimum, "approval")} from ${who.join(", ") || "nobody configured"}`,
    );
  }
  return lines.join("\n");
}
