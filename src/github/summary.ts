// Pure renderers from engine and state values to what GitHub shows: check-run output (reads like
// `argocd app get`), its conclusion, annotations, and the one PR comment that sums up every
// environment. No Octokit here: handlers send what these functions return. The output opens with
// what runs where (headline.ts), keeps each part inside one byte budget, most important first
// (budget.ts), and ends with one "Next:" line.
import type { EnvironmentConfig } from "../config/types.ts";
import type { HealthStatus, SyncResult } from "../engine/result.ts";
import type { RevertedChange } from "../engine/revert/trail.ts";
import { pinnedText } from "../reconciler/pin.ts";
import type { EnvironmentState, PinRecord } from "../state/types.ts";
import { fitParts, fitRows, type Part } from "./budget.ts";
import {
  approvalSection,
  diffDetails,
  diffWithin,
  driftFightSection,
  environmentSection,
  fullHistory,
  fullHistoryRows,
  fullHistoryWithin,
  historyRows,
  historyTable,
  isUnchanged,
  resourceRows,
  resourceTable,
  resourceTableWithin,
  revertedSection,
  riskyOrphansSection,
  secretsNotCompared,
} from "./check-run-sections.ts";
import { distinctErrors, errorsSection, shortMessage } from "./errors-section.ts";
import { code, codeCell, date, duration, inline, kubectlName, oneLine, plural } from "./format.ts";
import { changesIn, firstLine, nextStep, securityFinding, titleOf } from "./headline.ts";
import { commitLink, type Links, shortSha } from "./links.ts";
import { clipChars, tableCell } from "./markdown.ts";
import { byteLength, truncateBytes } from "./truncate.ts";

/** GitHub's cap on `output.summary` and `output.text`, in UTF-8 bytes. */
export const CHECK_OUTPUT_MAX_BYTES = 65535;
/** GitHub's cap on annotations per create/update request. */
export const ANNOTATIONS_PER_REQUEST = 50;
/** GitHub's cap on an issue comment body (characters; bytes are never fewer). */
export const COMMENT_MAX_BYTES = 65536;

/** Self-heal keeps re-applying an object that something in the cluster keeps changing back. */
export interface DriftFightAlert {
  /** kubectl-style name and where it lives, e.g. `deployment.apps/web in shop`. */
  object: string;
  /** JSON pointers fought over, e.g. `/spec/replicas`. */
  fields: string[];
  /** Field managers that changed them (from managedFields), e.g. `kube-controller-manager`. */
  managers: string[];
  /** Self-heals of this object within the window. */
  heals: number;
  windowMinutes: number;
  /** Ready-to-paste `ignoreDifferences` YAML. */
  ignoreSnippet: string;
}

/** A sync held until enough approvals for `revision` arrive (approvals are tied to the SHA). */
export interface ApprovalWait {
  revision: string;
  /** What would be deployed: the commits since the last synced revision and their pull requests. */
  range?: {
    base?: string;
    commits: Array<{ sha: string; title?: string; author?: string }>;
    pulls: Array<{ number: number; title?: string; author?: string }>;
    /** Commit addresses no GitHub account claims. */
    unclaimed?: string[];
  };
  /** Why the range could not be read (the approval itself reads it again). */
  rangeError?: string;
  /** Listed approvers who contributed to the range, so cannot approve it. */
  excluded?: string[];
  /**
   * The gate's own count, when the report comes from its decision: live approvers (lapsed ones
   * left out), approvals needed under the rules the revision is held to, and why it waits.
   */
  gate?: { approvers: string[]; needed: number; reason?: string };
}

export type CheckConclusion = "success" | "failure" | "action_required" | "neutral";

/** One check-run annotation, in the shape `checks.create` / `checks.update` take. */
export interface CheckAnnotation {
  path: string;
  start_line: number;
  end_line: number;
  annotation_level: "notice" | "warning" | "failure";
  message: string;
  title?: string;
}

/** A pull-request preview: what it shows is named by the PR's head and base, never the test merge. */
export interface PreviewInfo {
  number: number;
  headRef: string;
  headSha: string;
  baseRef: string;
  baseSha?: string;
}

export interface CheckRunOutputInput {
  env: EnvironmentConfig;
  state: EnvironmentState;
  /** The operation this check run reports (a sync, or a dry run for a diff preview). */
  result?: SyncResult;
  /** Unified diff, already redacted by the engine. */
  diff?: string;
  /** The tracked branch as shown: `main`. */
  repoBranch: string;
  /** `Automated (Prune, SelfHeal)`, `Manual`, `Frozen by @alice since … (reason)`. */
  effectivePolicy: string;
  alert?: DriftFightAlert;
  awaitingApproval?: ApprovalWait;
  /** What a self-heal reverted, with who had made each change (values already masked). */
  reverted?: RevertedChange[];
  /** Objects Git does not declare in the environment's namespaces that look risky (left alone). */
  riskyOrphans?: Array<{ object: string; risk?: string }>;
  /** Where commits and pull requests link to. */
  links?: Links;
  /** The commit the check run is on (the branch's head, for an out-of-sync report). */
  revision?: string;
  /** Markdown said right after the first line (a preview's target, why nothing was applied); counted in the budget. */
  notes?: string[];
  preview?: PreviewInfo;
  /** The environment is out of sync with `revision` (no operation ran). */
  outOfSync?: boolean;
  /** The "Next:" line's text, when the caller knows better (a render error, a held revision). */
  next?: string;
}

export interface CheckRunOutput {
  title: string;
  summary: string;
  text: string;
}

const HISTORY_ROWS = 5;

const SEVERITY: HealthStatus[] = ["Healthy", "Suspended", "Progressing", "Missing", "Degraded", "Unknown"];

/**
 * The check-run output for one environment. `summary` and `text` always fit GitHub's byte caps:
 * every part is fitted into one budget each, most important first (see budget.ts), and the text
 * ends with the one "Next:" line.
 */
export function checkRunOutput(
  given: CheckRunOutputInput,
  maxBytes = CHECK_OUTPUT_MAX_BYTES,
): CheckRunOutput {
  const input = { ...given, links: withHistoryTitles(given.links, given.state.history) };
  const health = healthOf(input);
  const env = input.env.name;
  const { summary, diffShown } = summaryOf(input, health, maxBytes);
  // The text continues the diff where the summary stopped; a diff shown whole is not repeated.
  const diff = input.diff?.trim() ? input.diff : undefined;
  const rest = diff === undefined || diffShown >= diff.length ? undefined : diff.slice(diffShown);
  return {
    title: titleOf(input, health),
    summary,
    text: fitParts(textParts(input, env, rest, diffShown > 0), maxBytes),
  };
}

/** The titles history recorded, so a commit is named wherever it is linked (the caller's win). */
function withHistoryTitles(links: Links | undefined, history: EnvironmentState["history"]): Links {
  const titles: Record<string, string> = {};
  for (const h of history) if (h.title) titles[h.revision] = h.title;
  return { ...links, titles: { ...titles, ...links?.titles } };
}

function summaryOf(
  input: CheckRunOutputInput,
  health: string,
  maxBytes: number,
): { summary: string; diffShown: number } {
  const { result } = input;
  const env = input.env.name;
  const resources = result?.resources ?? [];
  const head = statusList(input, health);
  const alerts = alertsOf(input);
  const rows = resourceRows(resources);
  const listed = `\`syncward app get ${env}\` lists every object`;
  const unchanged = resources.filter(isUnchanged).length;
  const entries = input.state.history
    .slice()
    .sort((a, b) => b.id - a.id)
    .slice(0, HISTORY_ROWS);
  const historyHeading = `#### History (last ${HISTORY_ROWS})`;
  const historyPointer = `_History: comment \`/history ${env}\` or run \`syncward app history ${env}\`._`;
  const diffPointer = `\`syncward app diff ${env}\` shows all of it`;
  const diff = input.diff?.trim() ? input.diff : undefined;
  const cuts = new Map<string, number>();
  // By priority: what must be read first is placed first; history gives way first.
  const parts: Part[] = [
    { order: 0, text: firstLine(input), required: true },
    { order: 1, text: (input.notes ?? []).filter((n) => n.trim() !== "").join("\n\n"), required: true },
    { order: 2, text: head, required: true },
    { order: 3, text: errorsSection(result, input.state, listed), required: true },
    { order: 4, text: alerts, required: true },
    {
      order: 6,
      text: unchanged > 0 ? `_${plural(unchanged, "unchanged object")} not listed; ${listed}._` : "",
      required: true,
    },
    { order: 7, text: secretsNotCompared(resources), required: true },
    { order: 10, text: footerOf(result), required: true },
    {
      order: 5,
      text: resourceTable(rows),
      shrink: (room) =>
        resourceTableWithin(
          rows,
          room,
          (n) => `_and ${plural(n, "more changed object")} not shown here; ${listed}._`,
        ),
      pointer: `_${plural(rows.length, "changed object")} not shown here; ${listed}._`,
    },
    {
      order: 8,
      text: diff === undefined ? "" : diffDetails(diff),
      shrink: (room) => {
        const cut = diff === undefined ? undefined : diffWithin(diff, room, diffPointer);
        cuts.set(cut?.text ?? "", cut?.shown ?? 0);
        return cut?.text;
      },
      pointer: `_The diff (${byteLength(diff ?? "")} bytes) does not fit here: the details below continue it, and ${diffPointer}._`,
    },
    {
      order: 9,
      text:
        entries.length === 0 ? "" : `${historyHeading}\n\n${historyTable(historyRows(entries, input.links))}`,
      shrink: (room) => {
        const table = historyTable(
          historyRows(entries, input.links),
          room - byteLength(`${historyHeading}\n\n`),
          (n) => `_and ${n} more: comment \`/history ${env}\`._`,
        );
        return table === undefined ? undefined : `${historyHeading}\n\n${table}`;
      },
      pointer: historyPointer,
    },
  ];
  const summary = fitParts(parts, maxBytes);
  // How much of the diff the summary holds: all, the cut that was placed, or none (a pointer).
  const whole = diff !== undefined && summary.includes(diffDetails(diff));
  const placed = [...cuts].find(([text]) => text !== "" && summary.includes(text));
  return { summary, diffShown: whole ? (diff?.length ?? 0) : (placed?.[1] ?? 0) };
}

/** The `argocd app get` lines: policy, sync and health status, the operation, a stuck revision. */
function statusList(input: CheckRunOutputInput, health: string): string {
  const { result, state } = input;
  return [
    // The operator's project, whose limits this environment deploys within (src/projects).
    ...(input.env.project ? [`- **Project:** \`${input.env.project.name}\``] : []),
    `- **Sync Policy:** ${inline(input.effectivePolicy)}`,
    `- **Sync Status:** ${syncStatusLine(input)}`,
    `- **Health Status:** ${health}`,
    ...(result === undefined ? [] : [`- **Operation:** ${operationLine(result)}`]),
    ...(state.stuck === undefined
      ? []
      : [
          `- **Stuck:** at ${commitLink(state.stuck.revision, input.links)} since ${date(state.stuck.since)}: ${inline(state.stuck.reason)}`,
        ]),
  ].join("\n");
}

/** What needs someone: a drift fight, what a heal reverted, a wait for approval, risky objects. */
function alertsOf(input: CheckRunOutputInput): string {
  return [
    ...(input.alert === undefined ? [] : [driftFightSection(input.alert)]),
    ...(input.reverted?.length ? [revertedSection(input.reverted, input.env.name)] : []),
    ...(input.awaitingApproval === undefined ? [] : [approvalSection(input, input.awaitingApproval)]),
    ...(input.riskyOrphans?.some((o) => o.risk) ? [riskyOrphansSection(input.riskyOrphans)] : []),
  ].join("\n\n");
}

/** The check run's `text`: what a person digs into after the summary, ending with "Next:". */
function textParts(
  input: CheckRunOutputInput,
  env: string,
  diff: string | undefined,
  continued: boolean,
): Part[] {
  const { result } = input;
  const parts: Part[] = [{ order: 9, text: nextStep(input), required: true }];
  if (result !== undefined) {
    const ms = Date.parse(result.finishedAt) - Date.parse(result.startedAt);
    parts.push({
      order: 0,
      required: true,
      text: [
        "### Operation",
        "",
        input.preview !== undefined
          ? `- **Revision:** ${code(input.preview.headRef)} at ${commitLink(input.preview.headSha, input.links)} merged into ${code(input.preview.baseRef)} (GitHub's test merge, not a commit on ${code(input.preview.baseRef)})`
          : `- **Revision:** ${commitLink(result.revision, input.links, { withTitle: true, full: true })}`,
        `- **Phase:** ${result.phase}${result.dryRun ? " (dry run)" : ""}`,
        `- **Started:** ${date(result.startedAt)}; **finished:** ${date(result.finishedAt)}${Number.isFinite(ms) && ms >= 0 ? ` (${duration(ms)})` : ""}`,
        `- **Message:** ${inline(clipChars(result.message, 1000))}`,
      ].join("\n"),
    });
  }
  parts.push({ order: 2, text: environmentSection(input.env), required: true });
  const drifted = (result?.resources ?? []).filter((r) => (r.drifted?.length ?? 0) > 0);
  const driftedRows = drifted.map(
    (r) =>
      `- \`${kubectlName(r)}\`${r.namespace === "" ? "" : ` in \`${r.namespace}\``}: ${r.drifted!.map((d) => code(d)).join(", ")}`,
  );
  if (driftedRows.length > 0)
    parts.push({
      order: 1,
      text: ["### Drifted fields", "", ...driftedRows].join("\n"),
      shrink: (room) =>
        fitRows(
          ["### Drifted fields", ""],
          driftedRows,
          room,
          (n) => `_and ${n} more: \`syncward app diff ${env}\`._`,
        ),
    });
  if (diff !== undefined) {
    const pointer = `\`syncward app diff ${env}\` shows all of it`;
    const heading = continued ? "### Diff, continued from the summary" : "### Diff";
    parts.push({
      order: 3,
      text: `${heading}\n\n${diffDetails(diff)}`,
      shrink: (room) => {
        const cut = diffWithin(diff, room - byteLength(`${heading}\n\n`), pointer);
        return cut === undefined ? undefined : `${heading}\n\n${cut.text}`;
      },
      pointer: `_The rest of the diff does not fit here: ${pointer}._`,
    });
  }
  const entries = input.state.history.slice().sort((a, b) => b.id - a.id);
  const rows = fullHistoryRows(entries, input.links);
  if (rows.length > 0)
    parts.push({
      order: 4,
      text: fullHistory(rows),
      shrink: (room) =>
        fullHistoryWithin(rows, room, (n) => `_and ${n} older: \`syncward app history ${env}\`._`),
      pointer: `_History: \`syncward app history ${env}\`._`,
    });
  // Priority: required first, then drifted fields, the diff, the history.
  return parts.sort((a, b) => Number(Boolean(b.required)) - Number(Boolean(a.required)) || a.order - b.order);
}

/** The check-run conclusion: never green for nothing done, a refusal, a fight or a reverted intrusion. */
export function conclusionFor(
  result?: SyncResult,
  alert?: DriftFightAlert,
  awaitingApproval?: ApprovalWait,
  reverted?: RevertedChange[],
): CheckConclusion {
  if (alert !== undefined) return "failure";
  if (result !== undefined && result.phase !== "Succeeded") return "failure";
  if (
    result !== undefined &&
    (result.totals.failed > 0 || result.resources.some((r) => r.status === "Failed"))
  ) {
    return "failure";
  }
  // Someone changed what runs or with what rights: reverted, but a person must find out who.
  if (securityFinding(reverted) !== undefined) return "action_required";
  if (awaitingApproval !== undefined) return "action_required";
  if (result === undefined) return "neutral";
  // 0/0 is not success: nothing rendered and nothing managed is worth a look, not a green tick.
  if (result.resources.length === 0) return "neutral";
  return "success";
}

/** GitHub's limit on a deployment status's description. */
const DESCRIPTION_MAX = 140;

/**
 * A deployment status's description: one clean line within GitHub's 140 characters. A pinned
 * environment's says so first (who and which entry give way when the names are long), so that
 * the environment's page on GitHub tells why it does not follow the branch.
 */
export function deploymentDescription(
  outcome: SyncResult,
  running?: string,
  pinned?: { pin: PinRecord; env: string },
): string {
  if (pinned) {
    const full = pinnedText(pinned.pin, pinned.env);
    if (outcome.phase !== "Succeeded")
      return oneLine(
        `${pinnedText(pinned.pin, pinned.env, undefined, true)}; ${deploymentDescription(outcome, running)}`,
      );
    return full.length <= DESCRIPTION_MAX
      ? full
      : oneLine(pinnedText(pinned.pin, pinned.env, undefined, true));
  }
  if (outcome.phase === "Succeeded") return oneLine(outcome.message);
  const first = (distinctErrors(outcome.resources)[0]?.message ?? outcome.message).replace(
    /^(refused|failed|error):\s*/i,
    "",
  );
  const still =
    running === undefined
      ? ""
      : outcome.writes > 0
        ? "partly updated; "
        : `still runs ${shortSha(running)}; `;
  return oneLine(`${outcome.phase === "Error" ? "error" : outcome.phase.toLowerCase()}: ${still}${first}`);
}

/**
 * Check-run annotations for problems with a file (config or manifest errors), in chunks of 50 (one
 * request each: the first with `checks.create`, the rest with `checks.update`, which appends).
 * Problems without a file cannot be annotated and are left to the summary.
 */
export function annotationsFor(
  problems: Array<{ file?: string; line?: number; message: string }>,
): CheckAnnotation[][] {
  const annotations: CheckAnnotation[] = [];
  for (const p of problems) {
    if (p.file === undefined || p.file === "") continue;
    const line = p.line !== undefined && Number.isInteger(p.line) && p.line >= 1 ? p.line : 1;
    annotations.push({
      path: p.file.replace(/^\.?\/+/, ""),
      start_line: line,
      end_line: line,
      annotation_level: "failure",
      message: truncateBytes(p.message, CHECK_OUTPUT_MAX_BYTES),
    });
  }
  const chunks: CheckAnnotation[][] = [];
  for (let i = 0; i < annotations.length; i += ANNOTATIONS_PER_REQUEST) {
    chunks.push(annotations.slice(i, i + ANNOTATIONS_PER_REQUEST));
  }
  return chunks;
}

/** `<!-- syncward:summary -->` for `syncward:summary` (a marker already in comment form is kept). */
export function htmlMarker(marker: string): string {
  const m = marker.trim();
  if (m.startsWith("<!--") && m.endsWith("-->")) return m;
  if (m.includes("--") || m === "")
    throw new Error(`a comment marker must be non-empty and contain no "--": ${JSON.stringify(marker)}`);
  return `<!-- ${m} -->`;
}

/** One environment's row of the pull request's summary comment. */
export interface PrCommentRow {
  env: string;
  status: string;
  revision: string;
  checkUrl?: string;
  note?: string;
  /** Configured approvers to notify (`@carol`, `@acme/sre`): the only live mentions syncward writes. */
  approvers?: string[];
}

/**
 * The PR comment summing up every environment. It starts with a hidden marker so the handler can
 * find its own comment (`body.includes(htmlMarker(marker))`) and edit it instead of adding another.
 */
export function prCommentBody(rows: PrCommentRow[], marker: string, links?: Links): string {
  const lines = [htmlMarker(marker), "#### syncward", ""];
  if (rows.length === 0) {
    lines.push("_No environment is affected by this pull request._");
  } else {
    lines.push("| ENVIRONMENT | STATUS | REVISION | CHECK | NOTE |", "| --- | --- | --- | --- | --- |");
    for (const r of rows) {
      const check =
        r.checkUrl === undefined
          ? ""
          : `[details](${r.checkUrl.replaceAll(")", "%29").replaceAll(" ", "%20")})`;
      lines.push(
        `| ${codeCell(r.env)} | ${tableCell(r.status)} | ${r.revision === "" ? "" : commitLink(r.revision, links)} | ${check} | ${noteCell(r.note ?? "", r.approvers ?? [])} |`,
      );
    }
  }
  lines.push("", "<sub>Comment `/help` for syncward commands. This comment is updated in place.</sub>");
  return truncateBytes(lines.join("\n"), COMMENT_MAX_BYTES);
}

/** A mention of a login or an `org/team`, whole: nothing else may reach a comment unescaped. */
const APPROVER_MENTION =
  /^@[A-Za-z0-9](?:[A-Za-z0-9]|-(?=[A-Za-z0-9])){0,38}(?:\/[A-Za-z0-9][A-Za-z0-9_.-]*)?$/;

/** The note, inert, then the approvers to notify: mentions on purpose, each checked to be one. */
function noteCell(note: string, approvers: string[]): string {
  const mentions = approvers.filter((a) => APPROVER_MENTION.test(a));
  const cell = tableCell(note);
  return mentions.length === 0 ? cell : `${cell}${cell === "" ? "" : " "}approvers: ${mentions.join(" ")}`;
}

// ---- status and health ----

function syncStatusLine(input: CheckRunOutputInput): string {
  const { result, state, repoBranch, links } = input;
  if (input.preview !== undefined && result !== undefined) {
    const changes = changesIn(result.resources);
    return changes > 0
      ? `OutOfSync: merging would change ${plural(changes, "object")}`
      : "Synced: merging would change nothing";
  }
  const runs = state.lastSyncedRevision;
  const revision = result?.revision ?? input.revision ?? runs;
  const at = revision === undefined ? "" : ` (${commitLink(revision, links)})`;
  const status = result?.dryRun
    ? changesIn(result.resources) > 0
      ? "OutOfSync"
      : "Synced"
    : state.syncStatus;
  // A pinned environment follows its pin, not the branch (as `syncward app get` says).
  if (status === "Synced") return `Synced to ${state.pin ? "pin" : inline(repoBranch)}${at}`;
  if (status === "OutOfSync") {
    // Two commits when they differ: what runs and where the branch is, never one for the other.
    if (runs !== undefined && revision !== undefined && runs !== revision && !result?.dryRun)
      return `OutOfSync: runs ${commitLink(runs, links)}, ${inline(repoBranch)} is at ${commitLink(revision, links)}`;
    return `OutOfSync from ${inline(repoBranch)}${at}`;
  }
  return "Unknown";
}

function healthOf(input: CheckRunOutputInput): string {
  const live = (input.result?.resources ?? []).filter(
    (r) => r.health !== undefined && r.status !== "Pruned" && r.action !== "would prune",
  );
  // As in Argo CD: objects without a health notion (ConfigMaps, RBAC) count as Healthy.
  if (live.length === 0)
    return (input.result?.resources.length ?? 0) > 0 ? "Healthy" : (input.state.health ?? "Unknown");
  let worst = 0;
  for (const r of live) worst = Math.max(worst, SEVERITY.indexOf(r.health!.status));
  return SEVERITY[worst] ?? "Unknown";
}

function operationLine(result: SyncResult): string {
  const kind = result.dryRun ? " (dry run)" : "";
  if (result.phase === "Succeeded" && result.resources.length === 0) {
    return `Succeeded${kind}, but **nothing to sync**: Git declares no objects for this environment and none are managed. ${inline(result.message)}`;
  }
  return `${result.phase}${kind}: ${inline(shortMessage(result.message, 200))}`;
}

/** Totals: with the errors, the part of a report that must survive truncation. */
function footerOf(result: SyncResult | undefined): string {
  if (result === undefined) return "";
  const t = result.totals;
  return [
    "---",
    `**Totals:** ${t.created} created, ${t.configured} configured, ${t.unchanged} unchanged, ${t.pruned} pruned, ` +
      `${t.failed} failed, ${t.skipped} skipped; ${plural(result.writes, "write")}${result.dryRun ? " (dry run)" : ""}.`,
  ].join("\n");
}
