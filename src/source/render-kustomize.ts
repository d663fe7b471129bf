// Rendering a kustomization with the real kustomize (`kubectl kustomize`), after checking that everything it
// would load is inside the repository at this revision: no remote bases, no climbing out, no symlinks out.

import { cp, mkdir, mkdtemp, readdir, readFile, realpath, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, relative, resolve, sep } from "node:path";
import { type Document, isMap, isSeq, parse as parseYaml } from "yaml";
import { groupOf, type KubeObject } from "../kube/object.ts";
import type { SourceProblem } from "./errors.ts";
import { ChartFetchError, fetchChart, type HelmRepositoryAccess, sandboxEnv } from "./helm-repositories.ts";
import { includedDirs } from "./includes.ts";
import { type ChartPull, precheckKustomizations } from "./kustomize-precheck.ts";
import { describeBytes, fileTooLarge, LIMIT_VARIABLES, type RenderLimits } from "./limits.ts";
import { type ManifestHead, manifestHeads } from "./manifest-heads.ts";
import { isPlainObject, type ParsedObject, parseManifests, parseYamlDocuments } from "./parse-manifests.ts";
import type { RenderedItem } from "./rendered-item.ts";
import { failureText, type RunResult, run } from "./run.ts";
import { isInside, relativeToTree, type SourcePath } from "./tree-paths.ts";

export const KUSTOMIZATION_FILES = ["kustomization.yaml", "kustomization.yml", "Kustomization"];
export const DEFAULT_KUSTOMIZE_TIMEOUT_MS = 60_000;
const ORIGIN = "config.kubernetes.io/origin";

export interface KustomizeOptions {
  kubectl: string;
  timeoutMs: number;
  limits: RenderLimits;
  /** helm for `helmCharts:` (run by kustomize with --enable-helm, in helm's sandbox). */
  helm?: string;
  /** Chart repositories `helmCharts:` may pull from (absent: none). */
  repositories?: HelmRepositoryAccess;
}

/** The kustomization file in `dir`, if any. */
export async function kustomizationIn(dir: string): Promise<string | undefined> {
  for (const name of KUSTOMIZATION_FILES) {
    try {
      if ((await stat(join(dir, name))).isFile()) return name;
    } catch {
      // not this one
    }
  }
  return undefined;
}

interface Entry {
  value: unknown;
  line: number;
}

/** Items of a top-level sequence field with their lines. */
function entriesOf(doc: Document.Parsed, field: string, lineAt: (offset: number) => number): Entry[] {
  const seq = doc.get(field, true);
  if (!isSeq(seq)) return [];
  return seq.items.map((node) => {
    const n = node as { range?: [number, number, number]; toJSON?: () => unknown };
    const range = n.range;
    const value = isMap(node) ? node.toJSON() : (node as { value?: unknown }).value;
    return { value, line: range ? lineAt(range[0]) : 1 };
  });
}

/**
 * Puts each chart `helmCharts:` pulls into its chart home in the work copy, fetched by syncward from
 * the allowed repository (cached by exact version), so kustomize itself needs no network.
 */
async function placeCharts(
  pulls: ChartPull[],
  cachedTree: string,
  treeReal: string,
  options: KustomizeOptions,
): Promise<void> {
  const access = options.repositories;
  if (!access || !options.helm) return;
  for (const pull of pulls) {
    const archive = await fetchChart(access, {
      helm: options.helm,
      repository: pull.repo,
      chart: pull.name,
      version: pull.version,
      passCredentials: false,
      timeoutMs: options.timeoutMs,
    }).catch((err: unknown) => {
      throw new ChartFetchError(
        `helmCharts '${pull.name}' ${pull.version} from ${pull.repo} could not be fetched: ${(err as Error).message}`,
      );
    });
    // kustomize looks in <chartHome>/<name> (older) or <chartHome>/<name>-<version>/<name> (newer).
    const home = join(treeReal, relative(cachedTree, pull.chartHome));
    for (const into of [home, join(home, `${pull.name}-${pull.version}`)]) {
      await mkdir(into, { recursive: true });
      const untar = await run({
        file: "tar",
        args: ["-xzf", archive, "-C", into],
        timeoutMs: options.timeoutMs,
      });
      if (!untar.ok)
        throw new ChartFetchError(
          `helmCharts '${pull.name}': the archive cannot be unpacked: ${failureText(untar)}`,
        );
    }
  }
}

/** kubectl prints kustomize's error through klog: `E1129 ... run.go:72] "command failed" err="..."`. */
export function kustomizeMessage(stderr: string, replacements: Array<[string, string]>): string {
  let text = stderr.trim();
  const klog = /\berr="((?:[^"\\]|\\.)*)"/.exec(text);
  if (klog?.[1] !== undefined) {
    try {
      text = JSON.parse(`"${klog[1]}"`) as string;
    } catch {
      text = klog[1];
    }
  } else {
    text = text.replace(/^Error: /m, "");
  }
  for (const [from, to] of replacements) text = text.split(from).join(to);
  return text.trim() || "kustomize failed without a message";
}

function originOf(object: KubeObject): { path?: string; configuredIn?: string } | undefined {
  const raw = object.metadata.annotations?.[ORIGIN];
  if (typeof raw !== "string") return undefined;
  try {
    const value: unknown = parseYaml(raw, { schema: "core", maxAliasCount: 0 });
    if (!isPlainObject(value)) return undefined;
    return {
      ...(typeof value.path === "string" ? { path: value.path } : {}),
      ...(typeof value.configuredIn === "string" ? { configuredIn: value.configuredIn } : {}),
    };
  } catch {
    return undefined;
  }
}

function stripOrigin(object: KubeObject): void {
  const annotations = object.metadata.annotations;
  if (!annotations || !(ORIGIN in annotations)) return;
  delete annotations[ORIGIN];
  if (Object.keys(annotations).length === 0) delete object.metadata.annotations;
}

/** Renders the kustomization in `source.abs`; every object points at the file it came from. */
export async function renderKustomize(
  source: SourcePath,
  kustomizationName: string,
  options: KustomizeOptions,
): Promise<{ items: RenderedItem[]; problems: SourceProblem[] }> {
  const { treeReal: cachedTree, abs: cachedDir, rel } = source;
  const kustomizationFile = relativeToTree(cachedTree, join(cachedDir, kustomizationName));

  const check = await precheckKustomizations(cachedTree, cachedDir, options.repositories?.allowed);
  const pulls = check.pulls;
  const refused = [...check.problems, ...(await oversizedIn(cachedTree, rel, options.limits))];
  if (refused.length > 0) return { items: [], problems: refused };
  // kustomize pulls a chart that is not vendored into chartHome, inside the kustomization's folder:
  // then it works on a copy, so the cached tree stays exactly the revision.
  const copy = pulls.length > 0 ? await mkdtemp(join(tmpdir(), "syncward-kustomize-tree-")) : undefined;
  if (copy) await cp(cachedTree, copy, { recursive: true, verbatimSymlinks: true });
  const treeReal = copy ? await realpath(copy) : cachedTree;
  if (copy) {
    try {
      await placeCharts(pulls, cachedTree, treeReal, options);
    } catch (err) {
      await rm(copy, { recursive: true, force: true });
      throw err;
    }
  }
  const dir = copy ? join(treeReal, relative(cachedTree, cachedDir)) : cachedDir;
  const keepOrigins = await asksForOrigins(join(dir, kustomizationName));

  // A wrapper kustomization outside the tree asks kustomize for origin annotations (which file each object
  // came from) without writing into the cached tree; they are removed again before anything is applied.
  const wrapperDir = keepOrigins ? undefined : await mkdtemp(join(tmpdir(), "syncward-kustomize-"));
  try {
    let originBase: string | undefined = wrapperDir ?? dir;
    let result: RunResult;
    if (wrapperDir) {
      const fromWrapper = relative(wrapperDir, dir).split(sep).join("/");
      await writeFile(
        join(wrapperDir, "kustomization.yaml"),
        `resources:\n- ${JSON.stringify(fromWrapper)}\nbuildMetadata: [originAnnotations]\n`,
      );
      result = await kustomize(options, wrapperDir);
      if (!result.ok && !result.timedOut && !result.spawnError) {
        // Ask again without the wrapper, so the message speaks of the user's files only.
        result = await kustomize(options, dir);
        originBase = undefined;
      }
    } else {
      result = await kustomize(options, dir);
    }
    if (result.tooMuchOutput) {
      return {
        items: [],
        problems: [
          {
            file: kustomizationFile,
            message: `kustomize build of '${rel}' produced more than ${describeBytes(options.limits.maxRenderBytes)} (${LIMIT_VARIABLES.maxRenderBytes}); refused`,
          },
        ],
      };
    }
    if (!result.ok) {
      // kustomize names a broken file without its folder and counts lines its own way: find the
      // YAML syntax errors ourselves, so the person gets `base/deployment.yaml:6: ...`.
      const syntax = await yamlProblemsIn(treeReal, rel);
      return {
        items: [],
        problems: [
          ...syntax,
          {
            file: kustomizationFile,
            message: `kustomize build of '${rel}' failed: ${whyFailed(result, options, treeReal)}`,
          },
        ],
      };
    }

    const parsed = parseManifests(result.stdout, kustomizationFile);
    const problems = parsed.problems.map(({ message }) => ({
      file: kustomizationFile,
      message: `kustomize output: ${message}`,
    }));
    const locate = new SourceLocator(treeReal);
    const items: RenderedItem[] = [];
    for (const { object } of parsed.objects) {
      const origin = originBase === undefined ? undefined : originOf(object);
      if (wrapperDir && originBase !== undefined) stripOrigin(object);
      const where = origin && originBase ? await locate.find(object, origin, originBase) : undefined;
      items.push({ object, file: where?.file ?? kustomizationFile, line: where?.line ?? 1 });
    }
    return { items, problems };
  } finally {
    if (wrapperDir) await rm(wrapperDir, { recursive: true, force: true });
    if (copy) await rm(copy, { recursive: true, force: true });
  }
}

/** Manifest files over the per-file limit in the folders a kustomization includes: refused before kustomize reads them. */
async function oversizedIn(treeReal: string, rel: string, limits: RenderLimits): Promise<SourceProblem[]> {
  const problems: SourceProblem[] = [];
  for (const dir of await includedDirs(treeReal, rel)) {
    const names = await readdir(join(treeReal, dir)).catch(() => [] as string[]);
    for (const name of names.filter((n) => /\.(ya?ml|json)$/i.test(n)).sort()) {
      const file = dir ? `${dir}/${name}` : name;
      const size = (await stat(join(treeReal, file)).catch(() => undefined))?.size ?? 0;
      if (size > limits.maxFileBytes) problems.push({ file, message: fileTooLarge(size, limits) });
    }
  }
  return problems;
}

/** YAML syntax problems in the files of every folder a kustomization includes. */
async function yamlProblemsIn(treeReal: string, rel: string): Promise<SourceProblem[]> {
  const problems: SourceProblem[] = [];
  for (const dir of await includedDirs(treeReal, rel)) {
    const names = await readdir(join(treeReal, dir)).catch(() => [] as string[]);
    for (const name of names.filter((n) => /\.ya?ml$/i.test(n)).sort()) {
      const file = dir ? `${dir}/${name}` : name;
      const text = await readFile(join(treeReal, file), "utf8").catch(() => undefined);
      if (text !== undefined) problems.push(...parseYamlDocuments(text, file).problems);
    }
  }
  return problems;
}

function whyFailed(result: RunResult, options: KustomizeOptions, treeReal: string): string {
  if (result.spawnError?.code === "ENOENT") {
    return `'${options.kubectl}' was not found; kubectl (or kustomize through it) is needed to render kustomizations`;
  }
  if (result.timedOut) return `timed out after ${options.timeoutMs} ms`;
  if (result.spawnError) return failureText(result);
  // Generator inputs kustomize quotes are masked where every render problem passes (scrub-render-error.ts).
  return kustomizeMessage(result.stderr, [
    [`${treeReal}${sep}`, ""],
    [treeReal, "."],
  ]);
}

/** Whether the kustomization itself asks for origin annotations: then they stay in the objects. */
async function asksForOrigins(file: string): Promise<boolean> {
  const parsed = parseYamlDocuments(await readFile(file, "utf8"), file);
  const value = parsed.documents[0]?.value;
  return (
    isPlainObject(value) &&
    Array.isArray(value.buildMetadata) &&
    value.buildMetadata.includes("originAnnotations")
  );
}

async function kustomize(options: KustomizeOptions, dir: string) {
  if (!options.helm) {
    return run({
      file: options.kubectl,
      args: ["kustomize", dir],
      cwd: dir,
      timeoutMs: options.timeoutMs,
      maxOutputBytes: options.limits.maxRenderBytes,
      isolate: true,
    });
  }
  // helmCharts: through the same helm, in the same sandbox as a chart source.
  const home = await mkdtemp(join(tmpdir(), "syncward-kustomize-helm-"));
  try {
    return await run({
      file: options.kubectl,
      args: ["kustomize", dir, "--enable-helm", "--helm-command", options.helm],
      cwd: dir,
      env: sandboxEnv(home),
      timeoutMs: options.timeoutMs,
      maxOutputBytes: options.limits.maxRenderBytes,
      isolate: true,
    });
  } finally {
    await rm(home, { recursive: true, force: true });
  }
}

/** Finds the file and line an object rendered by kustomize was written at. */
class SourceLocator {
  private readonly manifests = new Map<string, ManifestHead[]>();
  private readonly generators = new Map<string, Entry[]>();

  constructor(private readonly treeReal: string) {}

  async find(
    object: KubeObject,
    origin: { path?: string; configuredIn?: string },
    base: string,
  ): Promise<{ file: string; line: number } | undefined> {
    const originPath = origin.path ?? origin.configuredIn;
    if (originPath === undefined) return undefined;
    const lexical = resolve(base, originPath);
    // Name the file where the content lives, not a path through a symlinked directory.
    const abs = await realpath(lexical).catch(() => lexical);
    if (!isInside(this.treeReal, abs)) return undefined;
    const file = relativeToTree(this.treeReal, abs);
    const name = object.metadata.name;
    if (origin.path !== undefined) {
      const candidates = (await this.manifestsOf(abs, file)).filter(
        (c) => c.kind === object.kind && groupOf(c.apiVersion) === groupOf(object.apiVersion),
      );
      return { file, line: bestMatch(name, candidates, (c) => c.name ?? "")?.line ?? 1 };
    }
    const entries = await this.generatorsOf(abs, file);
    const match = bestMatch(name, entries, (e) =>
      isPlainObject(e.value) && typeof e.value.name === "string" ? e.value.name : "",
    );
    return { file, line: match?.line ?? 1 };
  }

  /** Each object's kind, name and line in a source file: a scan of its top lines, else a parse. */
  private async manifestsOf(abs: string, file: string): Promise<ManifestHead[]> {
    let found = this.manifests.get(abs);
    if (!found) {
      const text = await readFile(abs, "utf8").catch(() => "");
      found = manifestHeads(text) ?? parseManifests(text, file).objects.map(headOfParsed);
      this.manifests.set(abs, found);
    }
    return found;
  }

  private async generatorsOf(abs: string, file: string): Promise<Entry[]> {
    let found = this.generators.get(abs);
    if (!found) {
      const text = await readFile(abs, "utf8").catch(() => "");
      const parsed = parseYamlDocuments(text, file);
      const doc = parsed.documents[0]?.doc;
      found = doc
        ? ["configMapGenerator", "secretGenerator"].flatMap((f) => entriesOf(doc, f, parsed.lineAt))
        : [];
      this.generators.set(abs, found);
    }
    return found;
  }
}

function headOfParsed({ object, line }: ParsedObject): ManifestHead {
  const { apiVersion, kind, metadata } = object;
  return { apiVersion, kind, ...(metadata.name === undefined ? {} : { name: metadata.name }), line };
}

/** The candidate whose name is the rendered name, else the longest one the rendered name contains
 * (kustomize adds prefixes, suffixes and hashes), else the only candidate. */
function bestMatch<T>(rendered: string, candidates: T[], nameOf: (c: T) => string): T | undefined {
  const exact = candidates.find((c) => nameOf(c) === rendered);
  if (exact) return exact;
  let best: T | undefined;
  let bestLength = 0;
  for (const c of candidates) {
    const n = nameOf(c);
    if (n.length > bestLength && rendered.includes(n)) {
      best = c;
      bestLength = n.length;
    }
  }
  if (best) return best;
  return candidates.length === 1 ? candidates[0] : undefined;
}
