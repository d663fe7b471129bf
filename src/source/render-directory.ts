// Rendering a plain directory: every .yaml, .yml and .json file below it, in path order.

import { readFile, stat } from "node:fs/promises";
import { basename } from "node:path";
import { mapLimit } from "../util/map-limit.ts";
import type { SourceProblem } from "./errors.ts";
import { describeBytes, fileTooLarge, LIMIT_VARIABLES, type RenderLimits } from "./limits.ts";
import { parseManifests } from "./parse-manifests.ts";
import { KUSTOMIZATION_FILES } from "./render-kustomize.ts";
import type { RenderedItem } from "./rendered-item.ts";
import { relativeToTree, type SourcePath, walkTree } from "./tree-paths.ts";

const MANIFEST_FILE = /\.(ya?ml|json)$/i;
const READ_CONCURRENCY = 16;

export async function renderDirectory(
  source: SourcePath,
  limits: RenderLimits,
): Promise<{ items: RenderedItem[]; problems: SourceProblem[] }> {
  const { treeReal } = source;
  const found = source.isDirectory
    ? await walkTree(treeReal, source.abs, source.rel, {
        skipDotDirectories: true,
        wants: (name) => MANIFEST_FILE.test(name),
        reportBroken: true,
      })
    : { files: [{ rel: source.rel, abs: source.abs }], problems: [] };
  const problems: SourceProblem[] = [...found.problems];
  const items: RenderedItem[] = [];
  // Name the file where its content lives (a symlink's target), so annotations land on a real file;
  // a file reached twice through symlinks is read once.
  const seen = new Set<string>();
  const files = found.files
    .map((walked) => ({ abs: walked.abs, rel: relativeToTree(treeReal, walked.abs) }))
    .filter((file) => !seen.has(file.abs) && Boolean(seen.add(file.abs)));
  // Sizes are checked before reading, so a huge file never reaches memory. Files are stat'ed and
  // read several at a time (each is a few thread-pool round trips), then judged in path order.
  const sizes = await mapLimit(
    files,
    READ_CONCURRENCY,
    async (file) => (await stat(file.abs).catch(() => undefined))?.size ?? 0,
  );
  const plan: Array<{ file: (typeof files)[number]; problem?: string; read?: boolean }> = [];
  let bytesRead = 0;
  for (const [i, file] of files.entries()) {
    const size = sizes[i] ?? 0;
    if (KUSTOMIZATION_FILES.includes(basename(file.rel))) {
      plan.push({
        file,
        problem:
          "a kustomization inside a plain directory is not applied as a manifest; point the environment's path at its directory to render it with kustomize",
      });
    } else if (size > limits.maxFileBytes) {
      plan.push({ file, problem: fileTooLarge(size, limits) });
    } else if (bytesRead + size > limits.maxRenderBytes) {
      plan.push({
        file,
        problem: `the manifests read so far and this file come to more than ${describeBytes(limits.maxRenderBytes)} (${LIMIT_VARIABLES.maxRenderBytes}); the rest is not read`,
      });
      break;
    } else {
      bytesRead += size;
      plan.push({ file, read: true });
    }
  }
  const texts = await mapLimit(plan, READ_CONCURRENCY, async (p) =>
    p.read
      ? readFile(p.file.abs, "utf8").catch((err: Error) => ({ error: `cannot read file: ${err.message}` }))
      : undefined,
  );
  for (const [i, { file, problem }] of plan.entries()) {
    const text = texts[i];
    if (problem) problems.push({ file: file.rel, message: problem });
    if (text === undefined) continue;
    if (typeof text !== "string") {
      problems.push({ file: file.rel, message: text.error });
      continue;
    }
    const parsed = parseManifests(text.replace(/^\uFEFF/, ""), file.rel);
    problems.push(...parsed.problems);
    for (const { object, line } of parsed.objects) items.push({ object, file: file.rel, line });
  }
  return { items, problems };
}
