// Screenshots of what syncward shows on GitHub, drawn from the real renderers: each situation of
// test/support/check-run-situations.ts (the golden files' inputs) as Markdown, then HTML in
// GitHub's 900 px column, then a PNG by headless Chromium.
//   npm run screenshots                      # every situation, into a new temporary directory
//   npm run screenshots -- --out docs/images # refresh the committed ones (DOCUMENTED only)
//   npm run screenshots -- --only failed     # one situation
// Needs Chromium (`chromium`, or CHROMIUM=/path/to/chrome); not run in CI.
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { allSituations, type Rendered } from "../test/support/check-run-situations.ts";
import { COLUMN_PX, pageHtml } from "./screenshot-page.ts";

/** The situations docs/ shows, by file name in docs/images (the rest are drawn on request). */
export const DOCUMENTED: Record<string, string> = {
  intrusion: "check-run-intrusion.png",
  failed: "check-run-failed.png",
  approval: "check-run-approval.png",
  "config-loosened": "config-check-loosened.png",
};

const CHROMIUM_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--mute-audio"];

function chromium(args: string[]): string {
  const bin = process.env.CHROMIUM ?? "chromium";
  try {
    return execFileSync(bin, [...CHROMIUM_FLAGS, ...args], {
      encoding: "utf8",
      stdio: ["ignore", "pipe", "pipe"],
      timeout: 60_000,
    });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT")
      throw new Error(
        `npm run screenshots draws the pages with Chromium, and '${bin}' was not found: install it (sudo apt-get install chromium, or brew install --cask chromium) or set CHROMIUM=/path/to/chrome`,
      );
    throw err;
  }
}

/** The page's height at the column's width: the page writes it into its title (screenshot-page.ts). */
function heightOf(url: string): number {
  const dom = chromium([`--window-size=${COLUMN_PX},200`, "--dump-dom", url]);
  const height = Number(/<title>(\d+)<\/title>/.exec(dom)?.[1]);
  return Number.isFinite(height) && height > 0 ? Math.min(height, 12_000) : 2000;
}

/** The page and its Markdown go to `work` (kept for a look); the PNG to `dir`. */
function shoot(situation: Rendered, work: string, dir: string, file: string): string {
  const html = join(work, file.replace(/\.png$/, ".html"));
  writeFileSync(join(work, file.replace(/\.png$/, ".md")), situation.markdown);
  writeFileSync(html, pageHtml(situation));
  const url = `file://${html}`;
  const png = join(dir, file);
  chromium([`--window-size=${COLUMN_PX},${heightOf(url)}`, `--screenshot=${png}`, url]);
  return png;
}

function main(): void {
  const { values } = parseArgs({
    options: { out: { type: "string" }, only: { type: "string", multiple: true } },
  });
  const committed = values.out !== undefined && resolve(values.out) === resolve("docs/images");
  const work = mkdtempSync(join(tmpdir(), "syncward-screens-"));
  const dir = values.out === undefined ? work : resolve(values.out);
  mkdirSync(dir, { recursive: true });
  const wanted = (s: Rendered) =>
    values.only !== undefined ? values.only.includes(s.name) : !committed || s.name in DOCUMENTED;
  for (const situation of allSituations().filter(wanted)) {
    const png = shoot(situation, work, dir, DOCUMENTED[situation.name] ?? `${situation.name}.png`);
    process.stdout.write(`${png}\n`);
  }
  if (work !== dir) process.stdout.write(`pages drawn from: ${work}\n`);
}

main();
