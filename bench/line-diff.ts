// The line diff's time and memory at 1,000 / 10,000 / 100,000 replaced lines (a 2N-line text
// whose N `value:` lines all change: N removed + N added, between unchanged `name:` lines). Each size runs in a fresh process, so its peak RSS
// is its own. `node --import tsx bench/line-diff.ts` prints one JSON line per size.
import { execFileSync } from "node:child_process";
import { performance } from "node:perf_hooks";
import { unifiedDiff } from "../src/engine/diff/line-diff.ts";

function text(n: number, tag: string): string {
  let out = "";
  for (let i = 0; i < n; i++) out += `  - name: item-${i}\n    value: "${tag}-${i}"\n`;
  return out;
}

if (process.argv[2] === "one") {
  const n = Number(process.argv[3]);
  // n changed lines: every `value:` line differs, the `name:` lines between them do not.
  const a = text(n, "old");
  const b = text(n, "new");
  const rssBefore = process.resourceUsage().maxRSS;
  const start = performance.now();
  const diff = unifiedDiff(a, b, "live", "desired");
  const ms = performance.now() - start;
  const peakKiB = process.resourceUsage().maxRSS;
  process.stdout.write(
    `${JSON.stringify({
      changedLines: n,
      ms: Math.round(ms),
      peakRssMB: Math.round(peakKiB / 1024),
      growthMB: Math.round((peakKiB - rssBefore) / 1024),
      output: diff.length > 200 ? `${diff.split("\n").length} lines` : diff.trim().split("\n").at(-1),
    })}\n`,
  );
} else {
  for (const n of [1_000, 10_000, 100_000]) {
    process.stdout.write(
      execFileSync(process.execPath, ["--import", "tsx", import.meta.filename, "one", String(n)], {
        encoding: "utf8",
      }),
    );
  }
}
