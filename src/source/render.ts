// Rendering the manifests of one environment from a tree at an exact revision: kustomize when the path holds
// a kustomization, else every manifest file below it. Any problem fails the whole render (SourceError with
// every problem found), so a half-valid source is never applied.

import { type KubeObject, keyOf, keyString } from "../kube/object.ts";
import { SourceError, type SourceProblem } from "./errors.ts";
import { LIMIT_VARIABLES, limitsFromEnv, type RenderLimits } from "./limits.ts";
import { renderDirectory } from "./render-directory.ts";
import { DEFAULT_KUSTOMIZE_TIMEOUT_MS, kustomizationIn, renderKustomize } from "./render-kustomize.ts";
import type { RenderedItem } from "./rendered-item.ts";
import { resolveSourcePath } from "./tree-paths.ts";

export interface RenderedSource {
  objects: KubeObject[];
  /** keyString(keyOf(object)) -> source file relative to the repository root (for annotations). */
  files: Map<string, string>;
  /** keyString(keyOf(object)) -> 1-based line of the object's document in that file. */
  lines: Map<string, number>;
  renderer: "kustomize" | "directory";
}

export interface RenderOptions {
  /** The kubectl binary that runs `kubectl kustomize` (default `kubectl` on the PATH). */
  kubectl?: string;
  /** Deadline for one kustomize build (default 60 s). */
  timeoutMs?: number;
  /** Size and object limits (default: `limitsFromEnv()`). */
  limits?: Partial<RenderLimits>;
}

/**
 * Renders `path` (relative to the root of `treeDir`). Throws SourceError listing every problem: invalid or
 * unsafe YAML, objects without apiVersion/kind/metadata.name, duplicate objects, paths or symlinks leading
 * outside the repository, a missing path, kustomize failures, a file, a render or an object count over
 * the limits.
 */
export async function render(
  treeDir: string,
  path: string,
  options: RenderOptions = {},
): Promise<RenderedSource> {
  const limits = { ...limitsFromEnv(), ...options.limits };
  const source = await resolveSourcePath(treeDir, path);
  const kustomization = source.isDirectory ? await kustomizationIn(source.abs) : undefined;
  const renderer = kustomization ? "kustomize" : "directory";
  const { items, problems } = kustomization
    ? await renderKustomize(source, kustomization, {
        kubectl: options.kubectl ?? "kubectl",
        timeoutMs: options.timeoutMs ?? DEFAULT_KUSTOMIZE_TIMEOUT_MS,
        limits,
      })
    : await renderDirectory(source, limits);
  if (items.length > limits.maxObjects) {
    throw new SourceError([
      {
        file: source.rel,
        message: `the render produced ${items.length} objects; the limit is ${limits.maxObjects} (${LIMIT_VARIABLES.maxObjects}); nothing is applied`,
      },
      ...problems,
    ]);
  }
  return assemble(items, problems, renderer);
}

function assemble(
  items: RenderedItem[],
  found: SourceProblem[],
  renderer: RenderedSource["renderer"],
): RenderedSource {
  const problems = [...found];
  const objects: KubeObject[] = [];
  const files = new Map<string, string>();
  const lines = new Map<string, number>();
  for (const { object, file, line } of items) {
    // generateName hooks have no identity to collide on: each run gets a fresh name.
    if (!object.metadata.name) {
      objects.push(object);
      continue;
    }
    const key = keyString(keyOf(object));
    const first = files.get(key);
    if (first !== undefined) {
      problems.push({
        file,
        line,
        message: `duplicate object ${key}: also defined at ${first}:${lines.get(key) ?? 1}`,
      });
      continue;
    }
    objects.push(object);
    files.set(key, file);
    lines.set(key, line);
  }
  if (problems.length > 0) throw new SourceError(problems.sort(byPlace));
  return { objects, files, lines, renderer };
}

/** Problems in repository order: by file, then line (a stable sort keeps the order found within a line). */
function byPlace(a: SourceProblem, b: SourceProblem): number {
  const fa = a.file ?? "";
  const fb = b.file ?? "";
  if (fa !== fb) return fa < fb ? -1 : 1;
  return (a.line ?? 0) - (b.line ?? 0);
}
