// The `/history` reply: an environment's operations, newest first, each revision linked and named
// by its commit's title where history recorded one (entries written before titles were kept show
// the SHA alone).
import { rollbackText } from "../reconciler/pin.ts";
import type { HistoryEntry } from "../state/types.ts";
import { commitLink, type Links } from "./links.ts";
import { tableCell } from "./markdown.ts";

export function historyReply(envName: string, history: HistoryEntry[], links: Links | undefined): string {
  // The evidence column only where some entry was a promotion, with the evidence it used; an
  // automatic rollback's evidence goes there too, and a person's rollback's target and reason.
  const promoted = history.some((h) => h.promotion || h.autoRollback || h.rollback);
  const rows = history
    .slice()
    .reverse()
    .map(
      (h) =>
        `| ${h.id} | ${h.finishedAt.replace(/\.\d+Z$/, "Z")} | ${commitLink(h.revision, links, { withTitle: true, cell: true, title: h.title })} | ${tableCell(h.trigger)} | ${tableCell(h.actor)} | ${tableCell(h.result)} |${promoted ? ` ${evidenceCell(h)} |` : ""}`,
    );
  return [
    `**${envName}** history:`,
    "",
    `| ID | DATE | REVISION | TRIGGER | ACTOR | RESULT |${promoted ? " EVIDENCE |" : ""}`,
    `| --- | --- | --- | --- | --- | --- |${promoted ? " --- |" : ""}`,
    ...rows,
  ].join("\n");
}

function evidenceCell(h: HistoryEntry): string {
  const told =
    h.promotion ??
    (h.autoRollback && { ...h.autoRollback, reason: `automatic rollback: ${h.autoRollback.reason}` });
  if (told) return tableCell(`${told.reason}: ${told.evidence.join(", ")}`);
  return h.rollback ? tableCell(rollbackText(h.rollback)) : "";
}
