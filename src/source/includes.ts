// Which folders of the repository a source reads: its own path plus every local base, resource
// folder and component its kustomizations include, transitively. A push that touches none of
// them cannot change what the environment renders, so a monorepo push does not refresh it.
import { readFile } from "node:fs/promises";
import { dirname, join, normalize, relative } from "node:path";
import { parse } from "yaml";

const KUSTOMIZATIONS = ["kustomization.yaml", "kustomization.yml", "Kustomization"];
const FIELDS = ["resources", "bases", "components"] as const;

async function readKustomization(dir: string): Promise<Record<string, unknown> | undefined> {
  for (const name of KUSTOMIZATIONS) {
    try {
      const doc = parse(await readFile(join(dir, name), "utf8"), { maxAliasCount: 100 }) as unknown;
      return doc && typeof doc === "object" ? (doc as Record<string, unknown>) : {};
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "ENOENT") return undefined;
    }
  }
  return undefined;
}

/** Folders (relative to the tree root, "" for the root) whose files can change the render of `path`. */
export async function includedDirs(treeDir: string, path: string): Promise<string[]> {
  const seen = new Set<string>();
  const visit = async (rel: string): Promise<void> => {
    const clean = normalize(rel)
      .replace(/^\.\/?$/, "")
      .replace(/\/$/, "");
    if (clean.startsWith("..") || seen.has(clean)) return;
    seen.add(clean);
    const k = await readKustomization(join(treeDir, clean));
    if (!k) return;
    for (const field of FIELDS) {
      const entries = k[field];
      if (!Array.isArray(entries)) continue;
      for (const entry of entries) {
        if (typeof entry !== "string" || /^[a-z]+:\/\/|^git@|github\.com\//i.test(entry)) continue;
        const target = relative(treeDir, join(treeDir, clean, entry));
        // A file resource lives in a folder already counted; a folder may hold another kustomization.
        if (/\.(ya?ml|json)$/i.test(entry)) seen.add(dirname(target) === "." ? "" : dirname(target));
        else await visit(target);
      }
    }
  };
  await visit(path);
  return [...seen].sort();
}

/**
 * The repository files a chart source reads besides its own folder: value files and file parameters
 * (relative to the chart, or to the repository root with a leading "/"), so editing one refreshes it.
 */
export function helmInputs(
  path: string,
  helm: { valueFiles: string[]; fileParameters: Array<{ path: string }> } | undefined,
): string[] {
  if (!helm) return [];
  return [...helm.valueFiles, ...helm.fileParameters.map((p) => p.path)].map((file) =>
    file.startsWith("/") ? normalize(file.slice(1)) : normalize(join(path, file)),
  );
}
