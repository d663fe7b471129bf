// Pure renderers from engine and state values to what GitHub shows: check-run output (reads like
// `argocd app get`), its conclusion, annotations, and the one PR comment that sums up every
// environment. No Octokit here: handlers send what these functions return.
import { destinationName, type EnvironmentConfig } from "../config/types.ts";
import type { HealthStatus, ResourceResult, SyncResult } from "../engine/result.ts";
import type { RevertedChange } from "../engine/revert/trail.ts";
import type { EnvironmentState, HistoryEntry } from "../state/types.ts";
import { clipChars, codeSpan, fenceFor, inertInline, tableCell } from "./markdown.ts";
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
}

export interface CheckRunOutput {
  title: string;
  summary: string;
  text: string;
}

const HISTORY_ROWS = 5;
const MAX_ERRORS_LISTED = 20;
const MAX_CELL_CHARS = 300;
const MAX_TITLE_CHARS = 120;
/** Below this, a cut diff is not worth showing: point to the full one instead. */
const MIN_DIFF_BYTES = 512;

const SEVERITY: HealthStatus[] = ["Healthy", "Suspended", "Progressing", "Missing", "Degraded", "Unknown"];

/** The check-run output for one environment. `summary` and `text` always fit GitHub's byte caps. */
export function checkRunOutput(
  input: CheckRunOutputInput,
  maxBytes = CHECK_OUTPUT_MAX_BYTES,
): CheckRunOutput {
  const { result } = input;
  const health = healthOf(input);
  const footer = footerOf(result, input.state);

  const head = [
    // The operator's project, whose limits this environment deploys within (src/projects).
    ...(input.env.project ? [`- **Project:** \`${input.env.project.name}\``] : []),
    `- **Sync Policy:** ${inline(input.effectivePolicy)}`,
    `- **Sync Status:** ${syncStatusLine(input)}`,
    `- **Health Status:** ${health}`,
    ...(result === undefined ? [] : [`- **Operation:** ${operationLine(result)}`]),
    ...(input.state.stuck === undefined
      ? []
      : [
          `- **Stuck:** at \`${short(input.state.stuck.revision)}\` since ${date(input.state.stuck.since)}: ${inline(input.state.stuck.reason)}`,
        ]),
  ].join("\n");
  const alerts = [
    ...(input.alert === undefined ? [] : [driftFightSection(input.alert)]),
    ...(input.awaitingApproval === undefined ? [] : [approvalSection(input, input.awaitingApproval)]),
    ...(input.reverted?.length ? [revertedSection(input.reverted)] : []),
    ...(input.riskyOrphans?.some((o) => o.risk) ? [riskyOrphansSection(input.riskyOrphans)] : []),
  ];
  const history = historyTable(
    input.state.history
      .slice()
      .sort((a, b) => b.id - a.id)
      .slice(0, HISTORY_ROWS),
  );
  const historySection = history === "" ? "" : `#### History (last ${HISTORY_ROWS})\n\n${history}`;

  // Fit the summary: the diff gives way first, then unchanged rows of the table, then a plain cut
  // that keeps the footer (totals and errors).
  let table = resourceTable(result?.resources ?? [], false);
  const assemble = (diffBlock: string) =>
    joinSections([head, ...alerts, table, diffBlock, historySection, footer]);
  let diffBlock = "";
  let diffCut = false;
  if (input.diff !== undefined && input.diff.trim() !== "") {
    const full = diffDetails(input.diff);
    if (byteLength(assemble(full)) <= maxBytes) {
      diffBlock = full;
    } else {
      diffCut = true;
      let room = maxBytes - byteLength(assemble(diffDetails("")));
      if (room < MIN_DIFF_BYTES) {
        table = resourceTable(result?.resources ?? [], true);
        room = maxBytes - byteLength(assemble(diffDetails("")));
      }
      diffBlock =
        room >= MIN_DIFF_BYTES
          ? diffDetails(truncateBytes(input.diff, room))
          : `_The diff (${byteLength(input.diff)} bytes) does not fit here; it continues in the details below._`;
    }
  } else if (byteLength(assemble("")) > maxBytes) {
    table = resourceTable(result?.resources ?? [], true);
  }
  const summary = fitMarkdown(assemble(diffBlock), maxBytes, footer);

  const text = fitMarkdown(detailsText(input, diffCut ? input.diff : undefined, footer), maxBytes, footer);
  return { title: titleOf(input, health), summary, text };
}

/** The check-run conclusion: never green for nothing done, a refusal, or a fight. */
export function conclusionFor(
  result?: SyncResult,
  alert?: DriftFightAlert,
  awaitingApproval?: ApprovalWait,
): CheckConclusion {
  if (alert !== undefined) return "failure";
  if (result !== undefined && result.phase !== "Succeeded") return "failure";
  if (
    result !== undefined &&
    (result.totals.failed > 0 || result.resources.some((r) => r.status === "Failed"))
  ) {
    return "failure";
  }
  if (awaitingApproval !== undefined) return "action_required";
  if (result === undefined) return "neutral";
  // 0/0 is not success: nothing rendered and nothing managed is worth a look, not a green tick.
  if (result.resources.length === 0) return "neutral";
  return "success";
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
export function prCommentBody(rows: PrCommentRow[], marker: string): string {
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
        `| ${codeCell(r.env)} | ${tableCell(r.status)} | ${r.revision === "" ? "" : codeCell(short(r.revision))} | ${check} | ${noteCell(r.note ?? "", r.approvers ?? [])} |`,
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

// ---- title, status, health ----

function titleOf(input: CheckRunOutputInput, health: string): string {
  const { result, state } = input;
  let title: string;
  if (input.alert !== undefined) {
    title = `Drift fight on ${input.alert.object}`;
  } else if (result !== undefined && result.phase === "Refused") {
    title = /^refused: /i.test(result.message)
      ? `Refused: ${result.message.slice(9)}`
      : `Refused: ${result.message}`;
  } else if (result !== undefined && (result.phase !== "Succeeded" || result.totals.failed > 0)) {
    const failed = result.totals.failed;
    title = `Sync ${result.phase === "Error" ? "error" : "failed"}${failed > 0 ? ` (${failed} failed)` : ""}`;
  } else if (input.awaitingApproval !== undefined) {
    title = "Waiting for approval";
  } else if (result !== undefined && result.resources.length === 0) {
    title = "Nothing to sync";
  } else if (result?.dryRun) {
    const changes = changesIn(result);
    title = changes > 0 ? `OutOfSync (${plural(changes, "change")})` : `Synced, ${health}`;
  } else if (result !== undefined) {
    title = state.syncStatus === "OutOfSync" ? `OutOfSync, ${health}` : `Synced, ${health}`;
  } else if (state.stuck !== undefined) {
    title = `Stuck at ${short(state.stuck.revision)}`;
  } else {
    title = state.syncStatus === "Synced" ? `Synced, ${health}` : state.syncStatus;
  }
  const oneLine = title.replace(/\s+/g, " ").trim();
  return oneLine.length <= MAX_TITLE_CHARS ? oneLine : `${oneLine.slice(0, MAX_TITLE_CHARS - 1)}…`;
}

/** Objects a dry run would change. */
function changesIn(result: SyncResult): number {
  return result.resources.filter((r) => r.status === "OutOfSync" || r.action === "would prune").length;
}

function syncStatusLine(input: CheckRunOutputInput): string {
  const { result, state, repoBranch } = input;
  const revision = result?.revision ?? state.lastSyncedRevision;
  const at = revision === undefined ? "" : ` (${short(revision)})`;
  const status = result?.dryRun ? (changesIn(result) > 0 ? "OutOfSync" : "Synced") : state.syncStatus;
  if (status === "Synced") return `Synced to ${inline(repoBranch)}${at}`;
  if (status === "OutOfSync") return `OutOfSync from ${inline(repoBranch)}${at}`;
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
  return `${result.phase}${kind}: ${inline(result.message)}`;
}

// ---- sections ----

function driftFightSection(alert: DriftFightAlert): string {
  const fence = fenceFor(alert.ignoreSnippet);
  return [
    `#### ⚠️ Drift fight on ${inline(alert.object)}`,
    "",
    `Self-heal re-applied it ${plural(alert.heals, "time")} in ${plural(alert.windowMinutes, "minute")}, ` +
      "and something in the cluster keeps changing it back.",
    "",
    `- **Fields:** ${alert.fields.map(code).join(", ") || "unknown"}`,
    `- **Changed by (field managers):** ${alert.managers.map(code).join(", ") || "unknown"}`,
    "",
    "If they should own these fields, add this to the environment in `.github/syncward.yml`:",
    "",
    `${fence}yaml`,
    alert.ignoreSnippet.replace(/\n+$/, ""),
    fence,
  ].join("\n");
}

function revertedSection(reverted: RevertedChange[]): string {
  const risky = reverted.filter((r) => r.security);
  const rows = reverted.map((r) =>
    [
      r.security ? `⚠️ ${tableCell(r.security)}` : "",
      codeCell(r.object),
      codeCell(r.path),
      r.manager ? `${codeCell(r.manager)} ${tableCell(r.operation ?? "")}` : "unknown",
      r.at ? date(r.at) : "",
      r.value === undefined ? "" : codeCell(clipChars(r.value, 80)),
    ].join(" | "),
  );
  const spoofed = reverted.filter((r) => r.spoofing);
  return [
    ...(spoofed.length > 0 ? [spoofingSection(spoofed), ""] : []),
    risky.length > 0
      ? `#### ⚠️ Self-heal reverted ${plural(risky.length, "security-relevant change")}`
      : "#### Self-heal reverted out-of-band changes",
    "",
    "| Security | Object | Path | Changed by | When | Live value |",
    "|---|---|---|---|---|---|",
    ...rows.map((r) => `| ${r} |`),
  ].join("\n");
}

/** Changes made under a trusted manager's name (or syncward's) that the name is not trusted for. */
function spoofingSection(spoofed: RevertedChange[]): string {
  return [
    `#### 🚨 Spoofing attempt: ${plural(spoofed.length, "change")} under a trusted manager's name`,
    "",
    "Field manager names are not authenticated: whoever made these used a trusted name for fields it is not trusted for. They were reverted; find who has write access to the object.",
    "",
    ...spoofed.map((r) => `- ${code(r.object)} ${code(r.path)}: ${inline(r.spoofing ?? "")}`),
  ].join("\n");
}

function riskyOrphansSection(orphans: Array<{ object: string; risk?: string }>): string {
  const risky = orphans.filter((o) => o.risk);
  return [
    `#### ⚠️ ${plural(risky.length, "risky object")} not declared in Git`,
    "",
    ...risky.map((o) => `- ${code(o.object)}: ${inline(o.risk ?? "")}`),
    "",
    "Left alone (self-heal is the reset button, not the lock): delete them if nobody should have created them, and prevent them with admission control.",
  ].join("\n");
}

function approvalSection(input: CheckRunOutputInput, wait: ApprovalWait): string {
  const rule = input.env.approval;
  const have = wait.gate
    ? wait.gate.approvers.map((by) => ({ by }))
    : input.state.pendingApprovals.filter((a) => a.sha === wait.revision);
  const need = wait.gate?.needed ?? rule?.minimum ?? 1;
  const excluded = new Set((wait.excluded ?? []).map((l) => l.toLowerCase()));
  const approvers = [
    ...(rule?.users ?? []).filter((u) => !excluded.has(u.toLowerCase())).map((u) => `@${u}`),
    ...(rule?.teams ?? []).map((t) => (t.includes("/") ? `@${t}` : `team \`${t}\``)),
  ];
  const missing = Math.max(0, need - have.length);
  const paragraph = [
    `\`${short(wait.revision)}\` needs ${plural(need, "approval")} before it is synced to \`${input.env.name}\`` +
      ` (${have.length} so far${have.length > 0 ? `: ${have.map((a) => `@${a.by}`).join(", ")}` : ""}; **${missing} more** needed).`,
    ...(wait.gate?.reason ? [`Held: ${inline(wait.gate.reason)}.`] : []),
    ...(approvers.length > 0 ? [`Approvers: ${approvers.join(", ")}.`] : []),
    ...(excluded.size > 0
      ? [`Cannot approve it, having contributed to it: ${[...excluded].map(code).join(", ")}.`]
      : []),
    `An approver clicks **Approve** above or comments \`/approve ${input.env.name}\` on the pull request; nobody who contributed to what would be deployed may approve it. A new push needs new approvals.`,
  ];
  return ["#### Waiting for approval", "", ...paragraph, ...rangeSection(wait)].join("\n");
}

/** Most commits listed in the approval section; the rest are counted. */
const MAX_RANGE_ROWS = 30;

/** The commits and pull requests an approval would deploy; everything written by people is inert. */
function rangeSection(wait: ApprovalWait): string[] {
  if (wait.rangeError !== undefined)
    return ["", `_What would be deployed could not be read: ${inline(wait.rangeError)}._`];
  const range = wait.range;
  if (range === undefined) return [];
  const from = range.base === undefined ? "the first deployment" : `\`${short(range.base)}\``;
  const rows = range.commits
    .slice(0, MAX_RANGE_ROWS)
    .map(
      (c) =>
        `| ${codeCell(short(c.sha))} | ${c.author ? codeCell(c.author) : ""} | ${tableCell(c.title ?? "", 120)} |`,
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
                `#${p.number}${p.title ? ` ${inline(clipChars(p.title, 80))}` : ""}${p.author ? ` by ${code(p.author)}` : ""}`,
            )
            .join("; ")}.`,
        ]
      : []),
    ...(range.unclaimed?.length
      ? ["", `Commits by addresses no GitHub account claims: ${range.unclaimed.map(code).join(", ")}.`]
      : []),
  ];
}

/** The resource table; `compact` leaves out objects that were already in sync. */
function resourceTable(resources: ResourceResult[], compact: boolean): string {
  if (resources.length === 0) return "";
  const shown = compact
    ? resources.filter((r) => !(r.status === "Synced" && r.action === "unchanged"))
    : resources;
  const rows = shown.map(
    (r) =>
      `| ${tableCell(r.kind)} | ${tableCell(r.namespace)} | ${tableCell(r.name)} | ${tableCell(statusOf(r))} | ${tableCell(r.health?.status ?? "")} | ${tableCell(messageOf(r))} |`,
  );
  const omitted = resources.length - shown.length;
  return [
    "| KIND | NAMESPACE | NAME | STATUS | HEALTH | MESSAGE |",
    "| --- | --- | --- | --- | --- | --- |",
    ...rows,
    ...(omitted > 0 ? ["", `_${plural(omitted, "unchanged object")} not shown._`] : []),
  ].join("\n");
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

function diffDetails(diff: string): string {
  const body = diff.replace(/\n+$/, "");
  const fence = fenceFor(body);
  return ["<details><summary>Diff</summary>", "", `${fence}diff`, body, fence, "", "</details>"].join("\n");
}

function historyTable(entries: HistoryEntry[]): string {
  if (entries.length === 0) return "";
  return [
    "| ID | DATE | REVISION | TRIGGER | ACTOR | RESULT |",
    "| --- | --- | --- | --- | --- | --- |",
    ...entries.map(
      (h) =>
        `| ${h.id} | ${tableCell(date(h.startedAt))} | ${codeCell(short(h.revision))} | ${tableCell(h.trigger)} | ${tableCell(h.actor)} | ${tableCell(h.result)} |`,
    ),
  ].join("\n");
}

/** Totals and errors: the part of a report that must survive truncation. */
function footerOf(result: SyncResult | undefined, state: EnvironmentState): string {
  if (result === undefined) return "";
  const t = result.totals;
  const lines = [
    "---",
    `**Totals:** ${t.created} created, ${t.configured} configured, ${t.unchanged} unchanged, ${t.pruned} pruned, ` +
      `${t.failed} failed, ${t.skipped} skipped; ${plural(result.writes, "write")}${result.dryRun ? " (dry run)" : ""}.`,
  ];
  const failed = result.resources.filter((r) => r.status === "Failed" || r.action === "failed");
  const errors: string[] = [];
  if (result.phase !== "Succeeded") errors.push(`${result.phase}: ${inline(result.message)}`);
  for (const r of failed.slice(0, MAX_ERRORS_LISTED)) {
    errors.push(
      `\`${kubectlName(r)}\`${r.namespace === "" ? "" : ` in \`${r.namespace}\``}: ${inline(r.message)}`,
    );
  }
  if (failed.length > MAX_ERRORS_LISTED)
    errors.push(`and ${failed.length - MAX_ERRORS_LISTED} more failed objects`);
  if (state.stuck !== undefined && result.phase !== "Succeeded") {
    errors.push(`stuck since ${date(state.stuck.since)}: ${inline(state.stuck.reason)}`);
  }
  // Each part was made inert above; inline() again would escape it twice.
  if (errors.length > 0) lines.push("", "**Errors:**", ...errors.map((e) => `- ${clipChars(e, 1000)}`));
  return lines.join("\n");
}

/** The check run's `text`: what a person digs into after the summary. */
function detailsText(input: CheckRunOutputInput, diff: string | undefined, footer: string): string {
  const { env, result } = input;
  const sections: string[] = [];
  if (result !== undefined) {
    const ms = Date.parse(result.finishedAt) - Date.parse(result.startedAt);
    sections.push(
      [
        "### Operation",
        "",
        `- **Revision:** \`${result.revision}\``,
        `- **Phase:** ${result.phase}${result.dryRun ? " (dry run)" : ""}`,
        `- **Started:** ${date(result.startedAt)}; **finished:** ${date(result.finishedAt)}${Number.isFinite(ms) && ms >= 0 ? ` (${duration(ms)})` : ""}`,
        `- **Message:** ${inline(result.message)}`,
      ].join("\n"),
    );
    const drifted = result.resources.filter((r) => (r.drifted?.length ?? 0) > 0);
    if (drifted.length > 0) {
      sections.push(
        [
          "### Drifted fields",
          "",
          ...drifted.map(
            (r) =>
              `- \`${kubectlName(r)}\`${r.namespace === "" ? "" : ` in \`${r.namespace}\``}: ${r.drifted!.map(code).join(", ")}`,
          ),
        ].join("\n"),
      );
    }
  }
  if (input.state.history.length > 0) {
    const entries = input.state.history.slice().sort((a, b) => b.id - a.id);
    sections.push(
      [
        "### History",
        "",
        "| ID | STARTED | FINISHED | REVISION | TRIGGER | ACTOR | RESULT | CHANGES | MESSAGE |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- |",
        ...entries.map((h) => {
          const c = h.counts;
          const changes = `+${c.created} ~${c.configured} -${c.pruned} !${c.failed}`;
          const message = h.drifted?.length ? `${h.message} (drifted: ${h.drifted.join(", ")})` : h.message;
          return `| ${h.id} | ${tableCell(date(h.startedAt))} | ${tableCell(date(h.finishedAt))} | ${codeCell(short(h.revision))} | ${tableCell(h.trigger)} | ${tableCell(h.actor)} | ${tableCell(h.result)} | ${changes} | ${tableCell(message)} |`;
        }),
      ].join("\n"),
    );
  }
  sections.push(environmentSection(env));
  // Last before the footer: the part that gives way when the text is too long.
  if (diff !== undefined) sections.push(`### Diff\n\n${diffDetails(diff)}`);
  return joinSections([...sections, footer]);
}

function environmentSection(env: EnvironmentConfig): string {
  const p = env.syncPolicy;
  const dest = env.destination;
  const options = Object.entries(p.syncOptions)
    .map(([k, v]) => `${k}=${String(v)}`)
    .join(", ");
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
    for (const [command, level] of Object.entries(env.commands))
      byLevel.set(level, [...(byLevel.get(level) ?? []), `/${command}`]);
    lines.push(
      `- **Commands:** ${[...byLevel].map(([level, commands]) => `${commands.map(code).join(", ")} need ${level}`).join("; ")}`,
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

// ---- formatting helpers ----

/**
 * `markdown` cut to `maxBytes` with `truncateBytes`, keeping `tail` (totals and errors) visible: a
 * code fence or `<details>` left open by the cut is closed before the tail, so the tail is neither
 * rendered as code nor folded away.
 */
function fitMarkdown(markdown: string, maxBytes: number, tail: string): string {
  if (byteLength(markdown) <= maxBytes) return markdown;
  const body =
    tail !== "" && markdown.endsWith(tail) ? markdown.slice(0, markdown.length - tail.length) : markdown;
  const gap = tail === "" ? "" : "\n";
  let reserve = 0;
  for (let attempt = 0; attempt < 3; attempt++) {
    const cut = truncateBytes(body, Math.max(0, maxBytes - byteLength(tail) - byteLength(gap) - reserve));
    const closers = closersFor(cut);
    const out = `${cut}${closers}${gap}${tail}`;
    if (byteLength(out) <= maxBytes) return out;
    reserve = byteLength(closers);
  }
  return truncateBytes(markdown, maxBytes, tail);
}

/** What closes the code fence and `<details>` blocks left open at the end of `markdown`. */
function closersFor(markdown: string): string {
  let fence: string | undefined;
  let details = 0;
  for (const line of markdown.split("\n")) {
    const trimmed = line.trim();
    if (fence !== undefined) {
      if (trimmed.startsWith(fence[0]!) && /^(`+|~+)$/.test(trimmed) && trimmed.length >= fence.length)
        fence = undefined;
      continue;
    }
    const open = /^(`{3,}|~{3,})/.exec(trimmed);
    if (open !== null) fence = open[1];
    else if (trimmed.startsWith("<details>")) details++;
    else if (trimmed.startsWith("</details>")) details = Math.max(0, details - 1);
  }
  return `${fence === undefined ? "" : `\n${fence}`}${"\n\n</details>".repeat(details)}\n`;
}

function joinSections(sections: string[]): string {
  return sections.filter((s) => s !== "").join("\n\n");
}

/** A code span in a table cell: code spans show entities literally, so only pipes and newlines are escaped. */
function codeCell(value: string): string {
  return code(clipChars(value.replace(/\r?\n|\r/g, " "), MAX_CELL_CHARS)).replaceAll("|", "\\|");
}

/** Text inside a list item or paragraph: one line, no raw HTML. */
function inline(value: string): string {
  return inertInline(value).replace(/\s*(\r?\n|\r)\s*/g, " ");
}

function code(value: string): string {
  return codeSpan(value, MAX_CELL_CHARS);
}

function short(revision: string): string {
  return /^[0-9a-f]{40}$/i.test(revision) || /^[0-9a-f]{64}$/i.test(revision)
    ? revision.slice(0, 7)
    : revision;
}

function kubectlName(r: ResourceResult): string {
  return `${r.kind.toLowerCase()}${r.group === "" ? "" : `.${r.group}`}/${r.name}`;
}

function date(iso: string): string {
  const t = Date.parse(iso);
  if (Number.isNaN(t)) return iso;
  return `${new Date(t).toISOString().slice(0, 19).replace("T", " ")}Z`;
}

function duration(ms: number): string {
  if (ms < 1000) return `${ms}ms`;
  const s = Math.round(ms / 1000);
  if (s < 60) return `${s}s`;
  const m = Math.floor(s / 60);
  if (m < 60) return s % 60 === 0 ? `${m}m` : `${m}m${s % 60}s`;
  const h = Math.floor(m / 60);
  return m % 60 === 0 ? `${h}h` : `${h}h${m % 60}m`;
}

function plural(n: number, one: string, many = `${one}s`): string {
  return `${n} ${n === 1 ? one : many}`;
}
