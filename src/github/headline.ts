// What a check run says first and last: a title and conclusion that match what matters most (a
// reverted intrusion outranks "Synced"; a failed sync says what still runs), a first line saying
// what runs where, and one "Next:" line with what the reader can do.
import { destinationName } from "../config/types.ts";
import type { ResourceResult } from "../engine/result.ts";
import type { RevertedChange } from "../engine/revert/trail.ts";
import { pinnedText } from "../reconciler/pin.ts";
import { code, inline, plural, shortObject } from "./format.ts";
import { commitLink, environmentLink, pullLink, shortSha } from "./links.ts";
import type { ApprovalWait, CheckRunOutputInput } from "./summary.ts";

/** Approvals given and needed, from one source: the gate's count when the report comes from it. */
export function approvalCounts(
  input: Pick<CheckRunOutputInput, "env" | "state">,
  wait: ApprovalWait,
): { have: string[]; need: number; missing: number } {
  const have = wait.gate
    ? wait.gate.approvers
    : input.state.pendingApprovals.filter((a) => a.sha === wait.revision).map((a) => a.by);
  const need = wait.gate?.needed ?? input.env.approval?.minimum ?? 1;
  return { have, need, missing: Math.max(0, need - have.length) };
}

/** The reverted security-relevant changes, as a finding: the objects and what was found. */
export function securityFinding(
  reverted: RevertedChange[] | undefined,
): { objects: string[]; reasons: string[]; managers: string[] } | undefined {
  const risky = (reverted ?? []).filter((r) => r.security);
  if (risky.length === 0) return undefined;
  const objects = [...new Set(risky.map((r) => shortObject(r.object)))];
  const raw = new Set(risky.flatMap((r) => r.security!.split(/,\s*/)).filter(Boolean));
  const images = [...raw].filter((r) => r.startsWith("image ") && r !== "image changed");
  const reasons: string[] = [];
  for (const reason of raw) {
    if (reason === "new container" && images.length > 0) reasons.push(`new container ${images[0]!.slice(6)}`);
    else if (reason === "image changed" && images.length > 0) continue;
    else if (reason.startsWith("image ") && raw.has("new container") && reason === images[0]) continue;
    else reasons.push(reason);
  }
  const managers = [...new Set(risky.map((r) => r.manager).filter((m): m is string => m !== undefined))];
  return { objects, reasons, managers };
}

/** The check run's title: one line, what matters most first. */
export function titleOf(input: CheckRunOutputInput, health: string): string {
  const { result, state, env } = input;
  const runs = state.lastSyncedRevision;
  const finding = securityFinding(input.reverted);
  let title: string;
  if (input.alert !== undefined) {
    title = `Drift fight on ${input.alert.object}`;
  } else if (result !== undefined && result.phase === "Refused") {
    title = `Refused: ${result.message.replace(/^refused: /i, "")}`;
  } else if (result !== undefined && (result.phase !== "Succeeded" || result.totals.failed > 0)) {
    const what = result.phase === "Error" ? "Sync error" : "Sync failed";
    const where =
      runs === undefined
        ? `nothing deployed to ${env.name} yet`
        : result.writes > 0 && !result.dryRun
          ? `${env.name} partly updated from ${shortSha(runs)}`
          : `${env.name} still runs ${shortSha(runs)}`;
    title = `${what}; ${where}`;
  } else if (finding !== undefined) {
    const more = finding.objects.length - 1;
    title = `Reverted an intruder's changes to ${finding.objects[0]}${more > 0 ? ` and ${more} more` : ""}: ${finding.reasons.join(", ")}`;
  } else if (input.awaitingApproval !== undefined) {
    const { missing } = approvalCounts(input, input.awaitingApproval);
    title = missing > 0 ? `Waiting for approval: ${missing} more needed` : "Waiting for approval";
  } else if (result !== undefined && result.resources.length === 0) {
    title = "Nothing to sync";
  } else if (result?.dryRun) {
    const changes = changesIn(result.resources);
    title = changes > 0 ? `OutOfSync (${plural(changes, "change")})` : `Synced, ${health}`;
  } else if (result !== undefined) {
    title = state.syncStatus === "OutOfSync" ? `OutOfSync, ${health}` : `Synced, ${health}`;
  } else if (state.stuck !== undefined) {
    title = `Stuck at ${shortSha(state.stuck.revision)}`;
  } else if (input.outOfSync && input.revision !== undefined && runs !== input.revision) {
    title = `OutOfSync: ${env.name} runs ${runs === undefined ? "nothing yet" : shortSha(runs)}, ${input.repoBranch} is at ${shortSha(input.revision)}`;
  } else {
    title = state.syncStatus === "Synced" ? `Synced, ${health}` : state.syncStatus;
  }
  const oneLine = title.replace(/\s+/g, " ").trim();
  return oneLine.length <= MAX_TITLE_CHARS ? oneLine : `${oneLine.slice(0, MAX_TITLE_CHARS - 1)}…`;
}

const MAX_TITLE_CHARS = 120;

/** Objects a dry run would change. */
export function changesIn(resources: ResourceResult[]): number {
  return resources.filter((r) => r.status === "OutOfSync" || r.action === "would prune").length;
}

/** What runs where: `**prod** runs [`a1b2c3d`](…) Fix checkout in namespace `shop` on `prod-eu`.` */
export function firstLine(input: CheckRunOutputInput): string {
  const { env, state, result, links } = input;
  const dest = env.destination;
  const cluster = destinationName(dest);
  const where = `namespace ${code(dest.namespace)} ${cluster !== undefined ? `on ${code(cluster)}` : dest.inCluster ? "in-cluster" : "in the current context"}`;
  const name = environmentLink(`**${inline(env.name)}**`, env.environmentUrl);
  const runs = state.lastSyncedRevision;
  const what =
    runs === undefined ? "runs nothing from Git yet" : `runs ${commitLink(runs, links, { withTitle: true })}`;
  const partly =
    result !== undefined && !result.dryRun && result.phase !== "Succeeded" && result.writes > 0
      ? ` (this sync changed ${plural(result.writes, "object")} before it failed)`
      : "";
  const extra: string[] = [];
  const p = input.preview;
  if (p !== undefined) {
    extra.push(
      `this preview shows what merging ${pullLink(p.number, links)} (${code(p.headRef)} at ${commitLink(p.headSha, links)}) into ${code(p.baseRef)}${p.baseSha ? ` (at ${commitLink(p.baseSha, links)})` : ""} would change`,
    );
  } else if (input.awaitingApproval !== undefined) {
    extra.push(
      `${commitLink(input.awaitingApproval.revision, links, { withTitle: true })} waits for approval`,
    );
  } else if (input.revision !== undefined && runs !== undefined && input.revision !== runs) {
    const target = result?.revision ?? input.revision;
    if (target !== runs)
      extra.push(`${code(input.repoBranch)} is at ${commitLink(target, links, { withTitle: true })}`);
  }
  // A rollback's pin holds it where it is: said where the reader starts, with how to resume.
  if (state.pin !== undefined && p === undefined)
    extra.unshift(pinnedText(state.pin, env.name, (t) => code(t)));
  return `${name} ${what}${partly} in ${where}${extra.length > 0 ? `; ${extra.join("; ")}` : ""}.`;
}

/** The one line that ends every check run: what the reader can do now. */
export function nextStep(input: CheckRunOutputInput): string {
  if (input.next !== undefined) return `**Next:** ${input.next}`;
  return `**Next:** ${nextText(input)}`;
}

function nextText(input: CheckRunOutputInput): string {
  const { result, state, env } = input;
  const e = env.name;
  const finding = securityFinding(input.reverted);
  if (input.alert !== undefined)
    return "if that manager should own these fields, add the `ignoreDifferences` snippet above to `.github/syncward.yml`; otherwise stop it writing them.";
  if (input.preview !== undefined)
    return `merge the pull request to deploy it; \`syncward app diff ${e}\` shows the whole diff from a checkout.`;
  if (result?.phase === "Refused")
    return `fix what the refusal names, then comment \`/sync ${e}\`; syncing again unchanged is refused the same way.`;
  if (result?.phase === "Error")
    return `syncward tries again with backoff; if it keeps failing, check the cluster and its credentials (\`syncward app get ${e}\` shows what it sees).`;
  if (result !== undefined && (result.phase !== "Succeeded" || result.totals.failed > 0)) {
    const changed = result.writes > 0 && !result.dryRun ? "" : "Nothing was changed. ";
    return `${changed}Fix the error above in Git and push; \`/sync ${e}\` retries this same commit, which fails the same way unless the cause was in the cluster.`;
  }
  if (finding !== undefined)
    return `find who can write to ${finding.objects.map((o) => code(o)).join(", ")}${finding.managers.length > 0 ? ` (the changes came as ${finding.managers.map((m) => code(m)).join(", ")})` : ""} and revoke that access; self-heal reverts it again, and \`/history ${e}\` keeps the trail.`;
  if (/^frozen/i.test(input.effectivePolicy))
    return `comment \`/unfreeze ${e}\` to resume automated sync and self-heal.`;
  if (input.awaitingApproval !== undefined)
    return `an approver clicks **Approve** above or comments \`/approve ${e}\` on the pull request.`;
  if (state.pin !== undefined)
    return `comment \`/unpin ${e}\` when ${code(env.source.branch)} is fit to deploy again: until then ${e} stays at ${code(shortSha(state.pin.revision))}.`;
  if (result !== undefined && result.resources.length === 0)
    return `check that ${code(env.source.path)} on ${code(env.source.branch)} holds the manifests; nothing was applied.`;
  if (result?.dryRun)
    return changesIn(result.resources) > 0
      ? `comment \`/sync ${e}\` to apply it; \`syncward app diff ${e}\` shows the whole diff.`
      : "nothing to do: the live state matches Git.";
  if (state.stuck !== undefined) return `fix the cause the stuck line names, then comment \`/sync ${e}\`.`;
  if (input.outOfSync || state.syncStatus === "OutOfSync")
    return `comment \`/sync ${e}\` on a pull request, click **Sync** above, or run \`syncward app sync ${e}\`.`;
  if (state.syncStatus === "Synced") return `nothing to do; comment \`/history ${e}\` for earlier syncs.`;
  return `comment \`/diff ${e}\` to see what a sync would change, or \`/sync ${e}\` to sync.`;
}
