// Before kustomize runs: every kustomization of the graph (the rendered one, its bases, components and
// plugin folders) is read, and every path or URL it names (kustomize-references.ts) must be a file or
// folder inside the repository at this revision. A URL, a git address, an absolute path, `..` out of the
// tree or a symlink out of it is refused, naming the file, the field and the value.

import { readFile, realpath, stat } from "node:fs/promises";
import { join, resolve } from "node:path";
import type { Document } from "yaml";
import type { SourceProblem } from "./errors.ts";
import { REPOSITORIES_VARIABLE, repositoryAllowed } from "./helm-repositories.ts";
import { inlinePluginConfigs, looksRemote, type Reference, referencesOf } from "./kustomize-references.ts";
import { isPlainObject, parseYamlDocuments } from "./parse-manifests.ts";
import { isInside, relativeToTree, walkTree } from "./tree-paths.ts";

const KUSTOMIZATION_FILES = ["kustomization.yaml", "kustomization.yml", "Kustomization"];
const VENDOR = "vendor it into the repository";

/** A chart kustomize would pull for `helmCharts:`: fetched by syncward from an allowed repository instead. */
export interface ChartPull {
  name: string;
  repo: string;
  version: string;
  /** Absolute chart home of the kustomization that asks for it. */
  chartHome: string;
}

export interface Precheck {
  problems: SourceProblem[];
  pulls: ChartPull[];
  /** Generator inputs (env files, files: absolute paths; literals: their text), kept out of error messages. */
  generatorFiles: string[];
  literals: string[];
}

async function kustomizationIn(dir: string): Promise<string | undefined> {
  for (const name of KUSTOMIZATION_FILES)
    if ((await stat(join(dir, name)).catch(() => undefined))?.isFile()) return name;
  return undefined;
}

/** Why `ref` is refused, or where it leads (undefined target: missing, kustomize names it). */
async function resolveReference(
  treeReal: string,
  dir: string,
  ref: Reference,
): Promise<{ why?: string; target?: string }> {
  const value = ref.value.trim();
  if (looksRemote(value, ref.kind))
    return {
      why: `is a URL or remote address; refused: render only what the repository holds at this revision (${VENDOR})`,
    };
  if (value.startsWith("/") || value.startsWith("~") || /^[a-zA-Z]:[\\/]/.test(value))
    return { why: `is an absolute path; refused: paths are relative to the kustomization (${VENDOR})` };
  const lexical = resolve(dir, value);
  if (!isInside(treeReal, lexical)) return { why: "points outside the repository; refused" };
  if (!(await stat(lexical).catch(() => undefined))) return {};
  const real = await realpath(lexical).catch(() => undefined);
  if (real === undefined || !isInside(treeReal, real))
    return { why: "leads outside the repository through a symlink; refused" };
  return { target: real };
}

const EXACT_VERSION = /^v?\d+\.\d+\.\d+(?:-[0-9A-Za-z.-]+)?(?:\+[0-9A-Za-z.-]+)?$/;

/** Walks the kustomization graph from `startDir` and returns what is refused and what a render needs. */
export async function precheckKustomizations(
  treeReal: string,
  startDir: string,
  allowedRepositories: string[] = [],
): Promise<Precheck> {
  const out: Precheck = { problems: [], pulls: [], generatorFiles: [], literals: [] };
  const seen = new Set<string>();
  const scannedDirs = new Set<string>();

  async function checkDocument(
    dir: string,
    file: string,
    doc: Document.Parsed,
    lineAt: (o: number) => number,
    base = 0,
  ) {
    for (const ref of referencesOf(doc, lineAt)) {
      const line = ref.line + base;
      if (ref.generatorInput === "literal") {
        const eq = ref.value.indexOf("=");
        out.literals.push(eq < 0 ? ref.value : ref.value.slice(eq + 1));
        continue;
      }
      const { why, target } = await resolveReference(treeReal, dir, ref);
      if (why) {
        out.problems.push({ file, line, message: `${ref.field}: '${ref.value}' ${why}` });
        continue;
      }
      if (!target) continue;
      if (ref.generatorInput === "file") out.generatorFiles.push(target);
      const info = await stat(target);
      if (info.isDirectory() && (ref.kind === "resource" || ref.kind === "plugin")) await visit(target);
      else if (info.isFile() && ref.kind === "plugin") await checkPluginFile(dir, target);
    }
    for (const inline of inlinePluginConfigs(doc, lineAt))
      await checkConfigText(dir, file, inline.text, inline.line - 1 + base);
    checkHelmCharts(dir, file, doc, lineAt, base);
  }

  /** A plugin config file: each of its documents may name files too (a PatchTransformer's path...). */
  async function checkPluginFile(dir: string, abs: string) {
    await checkConfigText(dir, relativeToTree(treeReal, abs), await readFile(abs, "utf8"), 0);
  }

  async function checkConfigText(dir: string, file: string, text: string, base: number) {
    const parsed = parseYamlDocuments(text, file);
    out.problems.push(...parsed.problems);
    if (parsed.problems.length > 0) return;
    for (const { doc: d, value, line } of parsed.documents) {
      if (isPlainObject(value) && value.kind === "HelmChartInflationGenerator") {
        out.problems.push({
          file,
          line: base + line,
          message: `a HelmChartInflationGenerator plugin config is refused: use helmCharts: in the kustomization (its chart repository is checked against ${REPOSITORIES_VARIABLE})`,
        });
        continue;
      }
      await checkDocument(dir, file, d, parsed.lineAt, base);
    }
  }

  function checkHelmCharts(
    dir: string,
    file: string,
    doc: Document.Parsed,
    lineAt: (o: number) => number,
    base: number,
  ) {
    const value = doc.toJS({ maxAliasCount: 100 }) as unknown;
    if (!isPlainObject(value)) return;
    const globals = isPlainObject(value.helmGlobals) ? value.helmGlobals : {};
    const chartHome = resolve(dir, typeof globals.chartHome === "string" ? globals.chartHome : "charts");
    const charts = Array.isArray(value.helmCharts) ? value.helmCharts : [];
    const nodes = (doc.get("helmCharts", true) as { items?: unknown[] } | undefined)?.items ?? [];
    charts.forEach((chart, i) => {
      if (!isPlainObject(chart) || typeof chart.name !== "string") return;
      const start = (nodes[i] as { range?: number[] } | undefined)?.range?.[0];
      const line = base + (start === undefined ? 1 : lineAt(start));
      const name = chart.name;
      const repo = typeof chart.repo === "string" ? chart.repo : "";
      const version = chart.version === undefined ? "" : String(chart.version);
      if (!/^[A-Za-z0-9][A-Za-z0-9._-]*$/.test(name)) {
        out.problems.push({
          file,
          line,
          message: `helmCharts[${i}].name '${name}' is not a chart name; refused`,
        });
        return;
      }
      if (repo === "") return; // vendored under chartHome, or kustomize names the missing chart
      if (!EXACT_VERSION.test(version)) {
        out.problems.push({
          file,
          line,
          message: `helmCharts[${i}] '${name}': version ${version === "" ? "is missing" : `'${version}' is not an exact version`}; a chart from a repository needs an exact version (such as 1.2.3), so a commit always renders the same chart`,
        });
        return;
      }
      if (!repositoryAllowed(repo, allowedRepositories)) {
        out.problems.push({
          file,
          line,
          message: `helmCharts[${i}] '${name}': chart repository ${repo} is not allowed (the operator allows chart repositories with ${REPOSITORIES_VARIABLE}); vendor the chart under ${relativeToTree(treeReal, chartHome)}/${name} or ask for the repository; refused`,
        });
        return;
      }
      out.pulls.push({ name, repo, version, chartHome });
    });
  }

  async function visit(dir: string): Promise<void> {
    if (seen.has(dir)) return;
    seen.add(dir);
    const name = await kustomizationIn(dir);
    if (!name) return;
    // Everything kustomize can load from this kustomization lives below its directory: no symlink out.
    const scan = await walkTree(
      treeReal,
      dir,
      relativeToTree(treeReal, dir),
      { skipDotDirectories: false, wants: () => false, reportBroken: false },
      scannedDirs,
    );
    out.problems.push(...scan.problems);
    const file = relativeToTree(treeReal, join(dir, name));
    const parsed = parseYamlDocuments(await readFile(join(dir, name), "utf8"), file);
    out.problems.push(...parsed.problems);
    const first = parsed.documents[0];
    if (!first || !isPlainObject(first.value)) return;
    await checkDocument(dir, file, first.doc, parsed.lineAt);
  }

  await visit(startDir);
  return out;
}
