// Rendering a Helm chart with the real helm (`helm template`), as Argo CD does: at the exact revision,
// in a sandbox (private helm home, no plugins, no post-renderer, no kubeconfig, so `lookup` finds
// nothing), with the repository's files only, and dependencies from the operator's allowed repositories.

import { existsSync } from "node:fs";
import { cp, mkdir, mkdtemp, readdir, readFile, realpath, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { basename, join, posix, resolve } from "node:path";
import { stringify } from "yaml";
import type { HelmSource } from "../config/types.ts";
import { formatProblem, type SourceProblem } from "./errors.ts";
import {
  ChartFetchError,
  fetchChart,
  type HelmRepositoryAccess,
  REPOSITORIES_VARIABLE,
  repositoryAllowed,
  sandboxEnv,
} from "./helm-repositories.ts";
import { describeBytes, fileTooLarge, LIMIT_VARIABLES, type RenderLimits } from "./limits.ts";
import { isPlainObject, parseManifests, parseYamlDocuments } from "./parse-manifests.ts";
import type { RenderedItem } from "./rendered-item.ts";
import { failureText, type RunResult, run } from "./run.ts";
import { followSymlink, isInside, relativeToTree, type SourcePath, walkTree } from "./tree-paths.ts";

export const CHART_FILE = "Chart.yaml";

/** What the destination cluster is, for `.Capabilities`. */
export interface HelmCapabilities {
  kubeVersion?: string;
  apiVersions?: string[];
}

export interface HelmOptions {
  helm: string;
  timeoutMs: number;
  limits: RenderLimits;
  /** `source.helm` as configured (absent: every default). */
  settings?: HelmSource;
  /** Used when settings name none: the environment's name and destination namespace. */
  releaseName: string;
  namespace: string;
  capabilities?: HelmCapabilities;
  repositories: HelmRepositoryAccess;
  /** The repository, when the chart is not in it (a chart from a chart repository): "/" paths are its. */
  repoRoot?: string;
}

/** The chart's name and version, for `app get`. */
export interface ChartInfo {
  name: string;
  version: string;
}

interface Dependency {
  name: string;
  version: string;
  repository: string;
  line: number;
}

/** Whether `dir` holds a chart. */
export async function isChart(dir: string): Promise<boolean> {
  return stat(join(dir, CHART_FILE))
    .then((s) => s.isFile())
    .catch(() => false);
}

/** Parses Chart.yaml: name, version and dependencies, or the problems that stop a render. */
async function readChart(
  chartAbs: string,
  chartFile: string,
): Promise<{ chart?: ChartInfo; dependencies: Dependency[]; problems: SourceProblem[] }> {
  const parsed = parseYamlDocuments(await readFile(join(chartAbs, CHART_FILE), "utf8"), chartFile);
  const doc = parsed.documents[0];
  if (parsed.problems.length > 0 || !doc || !isPlainObject(doc.value)) {
    return {
      dependencies: [],
      problems:
        parsed.problems.length > 0 ? parsed.problems : [{ file: chartFile, message: "must be a mapping" }],
    };
  }
  const value = doc.value;
  const problems: SourceProblem[] = [];
  if (typeof value.name !== "string" || value.name === "")
    problems.push({ file: chartFile, line: doc.line, message: "name is required" });
  if (typeof value.version !== "string" && typeof value.version !== "number")
    problems.push({ file: chartFile, line: doc.line, message: "version is required" });
  const dependencies: Dependency[] = [];
  const seq = doc.doc.get("dependencies", true) as
    | { items?: Array<{ range?: [number, number, number] }> }
    | undefined;
  if (Array.isArray(value.dependencies)) {
    value.dependencies.forEach((d, i) => {
      const range = seq?.items?.[i]?.range;
      const line = range ? parsed.lineAt(range[0]) : doc.line;
      if (!isPlainObject(d) || typeof d.name !== "string") {
        problems.push({ file: chartFile, line, message: `dependencies[${i}]: name is required` });
        return;
      }
      dependencies.push({
        name: d.name,
        version: d.version === undefined ? "" : String(d.version),
        repository: typeof d.repository === "string" ? d.repository : "",
        line,
      });
    });
  }
  return {
    chart: problems.length === 0 ? { name: String(value.name), version: String(value.version) } : undefined,
    dependencies,
    problems,
  };
}

/** The chart's name and version from Chart.yaml at `dir`, or undefined when it cannot be read. */
export async function chartInfo(dir: string): Promise<ChartInfo | undefined> {
  return (await readChart(dir, CHART_FILE).catch(() => undefined))?.chart;
}

/** Whether charts/ already holds `dep` (a directory with its Chart.yaml, or an archive of it). */
async function vendored(chartAbs: string, dep: Dependency): Promise<boolean> {
  const names = await readdir(join(chartAbs, "charts")).catch(() => [] as string[]);
  if (names.includes(dep.name) && (await isChart(join(chartAbs, "charts", dep.name)))) return true;
  return names.some((n) => n.startsWith(`${dep.name}-`) && n.endsWith(".tgz"));
}

/** A path in source.helm: relative to the chart, or to the repository root with a leading "/". */
function repoPath(treeReal: string, chartAbs: string, path: string): string {
  return path.startsWith("/") ? resolve(treeReal, `.${path}`) : resolve(chartAbs, path);
}

/** Resolves a values or parameter file inside the repository, or says why not. */
async function resolveFile(
  treeReal: string,
  chartAbs: string,
  path: string,
): Promise<{ abs?: string; rel: string; missing?: boolean; problem?: string }> {
  const lexical = repoPath(treeReal, chartAbs, path);
  const rel = relativeToTree(treeReal, lexical);
  if (!isInside(treeReal, lexical)) return { rel, problem: "points outside the repository; refused" };
  const info = await stat(lexical).catch(() => undefined);
  if (!info) return { rel, missing: true };
  const followed = await followSymlink(treeReal, lexical);
  if (followed.problem) return { rel, problem: followed.problem };
  if (!info.isFile()) return { rel, problem: "is not a file" };
  return { abs: followed.target ?? lexical, rel };
}

/** Commas inside a --set value are part of the value (Argo CD escapes them the same way). */
const escapeSet = (value: string) => value.replace(/(?<!\\),/g, "\\,");

/** Everything helm may read lives below the chart: nothing may lead out of the repository, nothing too big. */
async function chartFileProblems(source: SourcePath, limits: RenderLimits): Promise<SourceProblem[]> {
  const scan = await walkTree(source.treeReal, source.abs, source.rel, {
    skipDotDirectories: false,
    wants: (name) => /\.(ya?ml|json|tpl|txt)$/i.test(name),
    reportBroken: false,
  });
  const problems = [...scan.problems];
  for (const file of scan.files) {
    const size = (await stat(file.abs).catch(() => undefined))?.size ?? 0;
    if (size > limits.maxFileBytes) problems.push({ file: file.rel, message: fileTooLarge(size, limits) });
  }
  return problems;
}

/** Adds `--values` and `--set-file` for the configured files to `args`; returns why any is refused. */
async function valueArgs(
  source: SourcePath,
  settings: HelmSource | undefined,
  limits: RenderLimits,
  args: string[],
  repoRoot = source.treeReal,
): Promise<SourceProblem[]> {
  const { abs: chartAbs } = source;
  // "/" is the repository's root; other paths are the chart's, wherever the chart is.
  const rootOf = (path: string) => (path.startsWith("/") ? repoRoot : source.treeReal);
  const refused: SourceProblem[] = [];
  for (const [i, path] of (settings?.valueFiles ?? []).entries()) {
    const found = await resolveFile(rootOf(path), chartAbs, path);
    if (found.problem)
      refused.push({ file: found.rel, message: `source.helm.valueFiles[${i}] '${path}' ${found.problem}` });
    else if (found.missing) {
      if (!settings?.ignoreMissingValueFiles)
        refused.push({
          file: found.rel,
          message: `source.helm.valueFiles[${i}] '${path}' does not exist at this revision (set ignoreMissingValueFiles: true to skip missing files)`,
        });
    } else if (found.abs) {
      const size = (await stat(found.abs)).size;
      if (size > limits.maxFileBytes) {
        refused.push({ file: found.rel, message: fileTooLarge(size, limits) });
        continue;
      }
      // helm counts lines of a values file as we do, but names it by the path it was given: check it here.
      refused.push(...parseYamlDocuments(await readFile(found.abs, "utf8"), found.rel).problems);
      args.push("--values", found.abs);
    }
  }
  for (const [i, p] of (settings?.fileParameters ?? []).entries()) {
    const found = await resolveFile(rootOf(p.path), chartAbs, p.path);
    if (found.problem || found.missing || !found.abs)
      refused.push({
        file: found.rel,
        message: `source.helm.fileParameters[${i}] '${p.path}' ${found.problem ?? "does not exist at this revision"}`,
      });
    else args.push("--set-file", `${p.name}=${found.abs}`);
  }

  return refused;
}

/** The dependencies to fetch (not vendored, from an allowed repository), and why any cannot be had. */
async function dependencyPlan(
  chartAbs: string,
  chartFile: string,
  dependencies: Dependency[],
  allowed: string[],
): Promise<{ missing: Dependency[]; problems: SourceProblem[] }> {
  const refused: SourceProblem[] = [];
  const missing: Dependency[] = [];
  for (const dep of dependencies) {
    if (await vendored(chartAbs, dep)) continue;
    if (dep.repository === "" || dep.repository.startsWith("file://") || dep.repository.startsWith("@")) {
      refused.push({
        file: chartFile,
        line: dep.line,
        message: `dependency '${dep.name}' is not in charts/: vendor it there (helm dependency build) and commit it`,
      });
    } else if (!/^(https?|oci):\/\//.test(dep.repository)) {
      refused.push({
        file: chartFile,
        line: dep.line,
        message: `dependency '${dep.name}': repository '${dep.repository}' is not an http(s) or oci URL`,
      });
    } else if (!repositoryAllowed(dep.repository, allowed)) {
      refused.push({
        file: chartFile,
        line: dep.line,
        message: `dependency '${dep.name}': chart repository ${dep.repository} is not allowed (the operator allows chart repositories with ${REPOSITORIES_VARIABLE}); refused`,
      });
    } else missing.push(dep);
  }
  return { missing, problems: refused };
}

/** Renders the chart in `source.abs`; every object points at the template it came from. */
export async function renderHelm(
  source: SourcePath,
  options: HelmOptions,
): Promise<{ items: RenderedItem[]; problems: SourceProblem[]; chart?: ChartInfo }> {
  const { treeReal, abs: chartAbs, rel } = source;
  const chartFile = rel === "." ? CHART_FILE : `${rel}/${CHART_FILE}`;
  const settings = options.settings;
  const fail = (problems: SourceProblem[], chart?: ChartInfo) => ({ items: [], problems, chart });

  const read = await readChart(chartAbs, chartFile);
  if (!read.chart) return fail(read.problems);
  const chart = read.chart;

  const args = [
    "template",
    settings?.releaseName ?? options.releaseName,
    ".",
    "--namespace",
    settings?.namespace ?? options.namespace,
    settings?.skipCrds ? "--skip-crds" : "--include-crds",
  ];
  if (settings?.skipTests) args.push("--skip-tests");
  const kubeVersion = settings?.kubeVersion ?? options.capabilities?.kubeVersion;
  if (kubeVersion) args.push("--kube-version", kubeVersion);
  for (const api of settings?.apiVersions ?? options.capabilities?.apiVersions ?? [])
    args.push("--api-versions", api);

  const refused = [
    ...(await chartFileProblems(source, options.limits)),
    ...(await valueArgs(source, settings, options.limits, args, options.repoRoot)),
  ];
  const { missing, problems: dependencyProblems } = await dependencyPlan(
    chartAbs,
    chartFile,
    read.dependencies,
    options.repositories.allowed,
  );
  refused.push(...dependencyProblems);
  if (refused.length > 0) return fail(refused, chart);

  const home = await mkdtemp(join(tmpdir(), "syncward-helm-"));
  try {
    let workDir = chartAbs;
    if (missing.length > 0) {
      // Fetched dependencies go into a copy of the chart: the cached tree stays exactly the revision.
      workDir = join(home, "chart");
      await cp(chartAbs, workDir, { recursive: true, dereference: true });
      await mkdir(join(workDir, "charts"), { recursive: true });
      for (const dep of missing) {
        try {
          const archive = await fetchChart(options.repositories, {
            helm: options.helm,
            repository: dep.repository,
            chart: dep.name,
            version: dep.version,
            passCredentials: settings?.passCredentials ?? false,
            timeoutMs: options.timeoutMs,
          });
          await cp(archive, join(workDir, "charts", basename(archive)));
        } catch (err) {
          throw new ChartFetchError(
            `${chartFile}:${dep.line}: dependency '${dep.name}' ${dep.version} from ${dep.repository} could not be fetched: ${(err as Error).message}`,
          );
        }
      }
    }
    if (settings?.valuesObject !== undefined || settings?.values !== undefined) {
      // Argo CD: inline values come after the value files; valuesObject wins over values.
      const inline = join(home, "inline-values.yaml");
      await writeFile(
        inline,
        settings.valuesObject !== undefined ? stringify(settings.valuesObject) : (settings.values ?? ""),
      );
      args.push("--values", inline);
    }
    for (const p of settings?.parameters ?? [])
      args.push(p.forceString ? "--set-string" : "--set", `${p.name}=${escapeSet(p.value)}`);

    const result = await run({
      file: options.helm,
      args,
      cwd: workDir,
      env: sandboxEnv(home),
      timeoutMs: options.timeoutMs,
      maxOutputBytes: options.limits.maxRenderBytes,
      isolate: true,
    });
    if (result.tooMuchOutput) {
      return fail(
        [
          {
            file: chartFile,
            message: `helm template of '${rel}' produced more than ${describeBytes(options.limits.maxRenderBytes)} (${LIMIT_VARIABLES.maxRenderBytes}); refused`,
          },
        ],
        chart,
      );
    }
    if (!result.ok)
      return fail(helmProblems(result, options, { treeReal, rel, chartFile, chart, workDir, home }), chart);

    const locate = templateLocator(result.stdout, rel, chartFile, chart.name, treeReal);
    const parsed = parseManifests(result.stdout, chartFile);
    const problems = parsed.problems.map((p) => ({
      file: locate(p.line ?? 1),
      message: `helm output: ${p.message}`,
    }));
    const items = parsed.objects.map(({ object, line }) => ({ object, file: locate(line), line: 1 }));
    return { items, problems, chart };
  } finally {
    await rm(home, { recursive: true, force: true });
  }
}

/**
 * Maps a line of helm's output to the repository file of its template (`# Source: web/templates/x.yaml`
 * names the chart, then the path inside it); a template of a fetched dependency maps to Chart.yaml.
 */
function templateLocator(
  stdout: string,
  rel: string,
  chartFile: string,
  chartName: string,
  treeReal: string,
): (line: number) => string {
  const sources: Array<{ line: number; file: string }> = [];
  stdout.split("\n").forEach((text, i) => {
    const m = /^# Source: (.+)$/.exec(text);
    if (!m?.[1]) return;
    const inside = m[1].startsWith(`${chartName}/`) ? m[1].slice(chartName.length + 1) : m[1];
    const file = rel === "." ? inside : posix.join(rel, inside);
    sources.push({ line: i + 1, file: existsSync(join(treeReal, file)) ? file : chartFile });
  });
  return (line) => {
    let found = chartFile;
    for (const s of sources) {
      if (s.line > line) break;
      found = s.file;
    }
    return found;
  };
}

interface FailureContext {
  treeReal: string;
  rel: string;
  chartFile: string;
  chart: ChartInfo;
  workDir: string;
  home: string;
}

/** helm's error as problems naming the chart file and line where helm gives them. */
function helmProblems(
  result: RunResult,
  options: Pick<HelmOptions, "helm" | "timeoutMs">,
  ctx: FailureContext,
): SourceProblem[] {
  if (result.spawnError?.code === "ENOENT") {
    return [
      {
        file: ctx.chartFile,
        message: `'${options.helm}' was not found; helm is needed to render charts (build it with tools/cluster/build.sh helm, or set SYNCWARD_HELM)`,
      },
    ];
  }
  if (result.timedOut)
    return [{ file: ctx.chartFile, message: `helm template timed out after ${options.timeoutMs} ms` }];
  if (result.spawnError) return [{ file: ctx.chartFile, message: failureText(result) }];
  let text = result.stderr
    .split("\n")
    .filter((l) => l.trim() !== "" && !/^Use --debug flag/.test(l))
    .join("\n")
    .replace(/^Error: /, "");
  for (const [from, to] of [
    [`${ctx.workDir}/`, ctx.rel === "." ? "" : `${ctx.rel}/`],
    [`${ctx.treeReal}/`, ""],
    [`${ctx.home}/`, ""],
  ] as const)
    text = text.split(from).join(to);
  text = text.trim() || `helm exited with status ${result.code ?? "unknown"}`;
  // `(web/templates/x.yaml:12:5)`, `template: web/templates/x.yaml:12:5:`, `parse error at (web/x.yaml:2)`
  const at = new RegExp(`(?:^|[\\s(])${escapeRe(ctx.chart.name)}/([^\\s:()]+):(\\d+)`).exec(text);
  if (at?.[1] && at[2]) {
    return [
      { file: ctx.rel === "." ? at[1] : posix.join(ctx.rel, at[1]), line: Number(at[2]), message: text },
    ];
  }
  const named = new RegExp(`(?:^|\\s)${escapeRe(ctx.chart.name)}/([^\\s:()]+\\.(?:ya?ml|tpl|txt|json))`).exec(
    text,
  );
  if (named?.[1])
    return [{ file: ctx.rel === "." ? named[1] : posix.join(ctx.rel, named[1]), message: text }];
  if (/values don't meet the specifications of the schema/.test(text)) {
    const schema = ctx.rel === "." ? "values.schema.json" : `${ctx.rel}/values.schema.json`;
    return [{ file: schema, message: text }];
  }
  return [{ file: ctx.chartFile, message: text }];
}

const escapeRe = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

/** A chart from a chart repository: source.chart, source.repoURL, source.targetRevision. */
export interface RemoteChart {
  chart: string;
  repoURL: string;
  version: string;
}

/**
 * Renders a chart fetched from an allowed chart repository (once per version, cached) with the value
 * files of the repository at this revision. Its objects point at the environment's path; problems in
 * the chart's own files name the chart and version, since they are not the repository's.
 */
export async function renderRemoteChart(
  repo: SourcePath,
  remote: RemoteChart,
  options: HelmOptions,
): Promise<{ items: RenderedItem[]; problems: SourceProblem[]; chart?: ChartInfo }> {
  const label = `chart '${remote.chart}' ${remote.version} from ${remote.repoURL}`;
  if (!repositoryAllowed(remote.repoURL, options.repositories.allowed)) {
    return {
      items: [],
      problems: [
        {
          message: `source.repoURL: chart repository ${remote.repoURL} is not allowed (the operator allows chart repositories with ${REPOSITORIES_VARIABLE}); refused`,
        },
      ],
    };
  }
  let archive: string;
  try {
    archive = await fetchChart(options.repositories, {
      helm: options.helm,
      repository: remote.repoURL,
      chart: remote.chart,
      version: remote.version,
      passCredentials: options.settings?.passCredentials ?? false,
      timeoutMs: options.timeoutMs,
    });
  } catch (err) {
    throw new ChartFetchError(`${label} could not be fetched: ${(err as Error).message}`);
  }
  const home = await mkdtemp(join(tmpdir(), "syncward-helm-chart-"));
  try {
    const untar = await run({
      file: "tar",
      args: ["-xzf", archive, "-C", home],
      timeoutMs: options.timeoutMs,
    });
    const top = (await readdir(home))[0];
    if (!untar.ok || top === undefined)
      return {
        items: [],
        problems: [{ message: `${label}: the archive cannot be unpacked: ${failureText(untar)}` }],
      };
    const treeReal = await realpath(home);
    const chartSource: SourcePath = { treeReal, abs: join(treeReal, top), rel: top, isDirectory: true };
    const out = await renderHelm(chartSource, { ...options, repoRoot: repo.treeReal });
    const inRepo = (file: string | undefined) => file !== undefined && existsSync(join(repo.treeReal, file));
    return {
      items: out.items.map((item) => ({ ...item, file: repo.rel, line: 1 })),
      problems: out.problems.map((p) =>
        inRepo(p.file) && !p.file?.startsWith(`${top}/`) ? p : { message: `${label}: ${formatProblem(p)}` },
      ),
      chart: out.chart,
    };
  } finally {
    await rm(home, { recursive: true, force: true });
  }
}
