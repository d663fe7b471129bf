// Rendering a plain directory: every .yaml, .yml and .json file below it, in path order.

import { readFile, stat } from "node:fs/promises";
import { basename } from "node:path";
import type { SourceProblem } from "./errors.ts";
import { describeBytes, fileTooLarge, LIMIT_VARIABLES, type RenderLimits } from "./limits.ts";
import { parseManifests } from "./parse-manifests.ts";
import { KUSTOMIZATION_FILES } from "./render-kustomize.ts";
import type { RenderedItem } from "./rendered-item.ts";
import { relativeToTree, type SourcePath, walkTree } from "./tree-paths.ts";

const MANIFEST_FILE = /\.(ya?ml|json)$/i;

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
  const read = new Set<string>();
  let bytesRead = 0;
  for (const walked of found.files) {
    // Name the file where its content lives (a symlink's target), so annotations land on a real file;
    // a file reached twice through symlinks is read once.
    const file = { abs: walked.abs, rel: relativeToTree(treeReal, walked.abs) };
    if (read.has(file.abs)) continue;
    read.add(file.abs);
    if (KUSTOMIZATION_FILES.includes(basename(file.rel))) {
      problems.push({
        file: file.rel,
        message:
          "a kustomization inside a plain directory is not applied as a manifest; point the environment's path at its directory to render it with kustomize",
      });
      continue;
    }
    // Sizes are checked before reading, so a huge file never reaches memory.
    const size = (await stat(file.abs).catch(() => undefined))?.size ?? 0;
    if (size > limits.maxFileBytes) {
      problems.push({ file: file.rel, message: fileTooLarge(size, limits) });
      continue;
    }
    if (bytesRead + size > limits.maxRenderBytes) {
      problems.push({
        file: file.rel,
        message: `the manifests read so far and this file come to more than ${describeBytes(limits.maxRenderBytes)} (${LIMIT_VARIABLES.maxRenderBytes}); the rest is not read`,
      });
      break;
    }
    bytesRead += size;
    let text: string;
    try {
      text = await readFile(file.abs, "utf8");
    } catch (err) {
      problems.push({ file: file.rel, message: `cannot read file: ${(err as Error).message}` });
      continue;
    }
    const parsed = parseManifests(text.replace(/^\uFEFF/, ""), file.rel);
    problems.push(...parsed.problems);
    for (const { object, line } of parsed.objects) items.push({ object, file: file.rel, line });
  }
  return { items, problems };
}
