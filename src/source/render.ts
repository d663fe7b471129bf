// Rendering the manifests of one environment from a tree at an exact revision: helm when the path holds a
// Chart.yaml (as Argo CD decides), kustomize when it holds a kustomization, else every manifest file below it. Any problem fails the whole render (SourceError with
// every problem found), so a half-valid source is never applied.

import type { HelmSource } from "../config/types.ts";
import { type KubeObject, keyOf, keyString } from "../kube/object.ts";
import { SourceError, type SourceProblem } from "./errors.ts";
import { helmBinary } from "./helm-binary.ts";
import { type HelmRepositoryAccess, repositoryAccessFromEnv } from "./helm-repositories.ts";
import { precheckKustomizations } from "./kustomize-precheck.ts";
import { LIMIT_VARIABLES, limitsFromEnv, type RenderLimits } from "./limits.ts";
import { renderDirectory } from "./render-directory.ts";
import {
  type ChartInfo,
  type HelmCapabilities,
  isChart,
  type RemoteChart,
  renderHelm,
  renderRemoteChart,
} from "./render-helm.ts";
import { DEFAULT_KUSTOMIZE_TIMEOUT_MS, kustomizationIn, renderKustomize } from "./render-kustomize.ts";
import type { RenderedItem } from "./rendered-item.ts";
import { scrubRenderProblems } from "./scrub-render-error.ts";
import { resolveSourcePath, type SourcePath } from "./tree-paths.ts";

export interface RenderedSource {
  objects: KubeObject[];
  /** keyString(keyOf(object)) -> source file relative to the repository root (for annotations). */
  files: Map<string, string>;
  /** keyString(keyOf(object)) -> 1-based line of the object's document in that file. */
  lines: Map<string, number>;
  renderer: "helm" | "kustomize" | "directory";
  /** The chart's name and version (helm only). */
  chart?: ChartInfo;
}

/** How a chart source is rendered: the environment's settings and what its cluster serves. */
export interface HelmRenderContext {
  settings?: HelmSource;
  /** Default release name: the environment's name. */
  releaseName: string;
  /** Default release namespace: the destination namespace. */
  namespace: string;
  /** What the destination serves; only read when the source is a chart. */
  capabilities?: () => Promise<HelmCapabilities | undefined>;
  /** A chart from a chart repository instead of one at the path (the path holds its value files). */
  remote?: RemoteChart;
}

export interface RenderOptions {
  /** The kubectl binary that runs `kubectl kustomize` (default `kubectl` on the PATH). */
  kubectl?: string;
  /** Deadline for one kustomize build (default 60 s). */
  timeoutMs?: number;
  /** Size and object limits (default: `limitsFromEnv()`). */
  limits?: Partial<RenderLimits>;
  /** The helm binary (default: `helmBinary()`). */
  helm?: string;
  /** Chart sources: release, namespace, settings (without it a chart renders with helm's defaults). */
  helmContext?: HelmRenderContext;
  /** Chart repositories dependencies may come from (default: the operator's environment). */
  repositories?: HelmRepositoryAccess;
  /** URL prefixes whose operator-held credentials this render may use (its project's grants); absent: all. */
  credentialsGranted?: string[];
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
  const source = await resolveSourcePath(treeDir, path);
  try {
    return await renderSource(source, options);
  } catch (err) {
    // The one place every render problem passes: generator inputs never leave in a message.
    if (!(err instanceof SourceError) || !source.isDirectory) throw err;
    const inputs = await precheckKustomizations(source.treeReal, source.abs).catch(() => undefined);
    const generator = { files: inputs?.generatorFiles ?? [], literals: inputs?.literals ?? [] };
    throw new SourceError(await scrubRenderProblems(err.problems, source.treeReal, generator));
  }
}

async function renderSource(source: SourcePath, options: RenderOptions): Promise<RenderedSource> {
  const limits = { ...limitsFromEnv(), ...options.limits };
  const remote = options.helmContext?.remote;
  const chart = Boolean(remote) || (source.isDirectory && (await isChart(source.abs)));
  if (!chart && options.helmContext?.settings) {
    throw new SourceError([
      { file: source.rel, message: "source.helm is set, but the path holds no Chart.yaml at this revision" },
    ]);
  }
  const kustomization = source.isDirectory && !chart ? await kustomizationIn(source.abs) : undefined;
  const renderer = chart ? "helm" : kustomization ? "kustomize" : "directory";
  const timeoutMs = options.timeoutMs ?? DEFAULT_KUSTOMIZE_TIMEOUT_MS;
  const helm = options.helm ?? helmBinary();
  let chartInfo: ChartInfo | undefined;
  let rendered: { items: RenderedItem[]; problems: SourceProblem[] };
  if (chart) {
    const context = options.helmContext;
    const helmOptions = {
      helm,
      timeoutMs,
      limits,
      settings: context?.settings,
      releaseName: context?.releaseName ?? "release",
      namespace: context?.namespace ?? "default",
      capabilities: await context?.capabilities?.(),
      repositories: {
        ...(options.repositories ?? (await repositoryAccessFromEnv())),
        ...(options.credentialsGranted ? { credentialsGranted: options.credentialsGranted } : {}),
      },
    };
    const out = remote
      ? await renderRemoteChart(source, remote, helmOptions)
      : await renderHelm(source, helmOptions);
    chartInfo = out.chart;
    rendered = out;
  } else if (kustomization) {
    rendered = await renderKustomize(source, kustomization, {
      kubectl: options.kubectl ?? "kubectl",
      timeoutMs,
      limits,
      helm,
      repositories: options.repositories,
    });
  } else rendered = await renderDirectory(source, limits);
  const { items, problems } = rendered;
  if (items.length > limits.maxObjects) {
    throw new SourceError([
      {
        file: source.rel,
        message: `the render produced ${items.length} objects; the limit is ${limits.maxObjects} (${LIMIT_VARIABLES.maxObjects}); nothing is applied`,
      },
      ...problems,
    ]);
  }
  return { ...assemble(items, problems, renderer), ...(chartInfo ? { chart: chartInfo } : {}) };
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
