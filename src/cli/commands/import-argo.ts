// `syncward import-argo FILE`: prints the syncward environment for an Argo CD Application, the
// project for an AppProject, or the operator's `resourceCustomizations` (custom health checks, for the projects document) of an Argo CD
// `argocd-cm` ConfigMap.
import { readFile } from "node:fs/promises";
import { parse, stringify } from "yaml";
import { importArgoConfigMap, isArgoCdConfigMapText } from "../../config/argo-cm-import.ts";
import { ArgoImportError, importArgoApplication } from "../../config/argo-import.ts";
import { ARGO_SECRET_LABEL, ClusterSecretError, clusterSecretFromArgo } from "../../kube/cluster-secret.ts";
import { AppProjectImportError, importArgoAppProject, isAppProjectText } from "../../projects/argo-import.ts";
import { type CliIO, EXIT } from "../io.ts";
import { UsageError } from "../usage-error.ts";

export async function importArgoCommand(argv: string[], io: CliIO): Promise<number> {
  const [file] = argv;
  if (!file || argv.length > 1)
    throw new UsageError("usage: syncward import-argo APPLICATION.yaml|APPPROJECT.yaml|argocd-cm.yaml");
  const text = await readFile(file, "utf8").catch(() => {
    throw new UsageError(`cannot read ${file}`);
  });
  try {
    // An argocd-cm is recognised by its kind; everything else is read as an Application.
    if (isArgoCdConfigMapText(text)) {
      const cm = importArgoConfigMap(text);
      io.out(cm.yaml);
      for (const note of cm.notes) io.err(`note: ${note}`);
      return EXIT.ok;
    }
    // A cluster Secret becomes syncward's registry Secret (kubectl apply -n syncward -f -).
    if (isArgoClusterSecretText(text)) {
      io.out(stringify(clusterSecretFromArgo(parse(text), "syncward")));
      io.err(
        "note: apply it in syncward's namespace; it holds the cluster's credentials, so keep it out of Git",
      );
      return EXIT.ok;
    }
    // An AppProject becomes one project of the operator's projects document.
    if (isAppProjectText(text)) {
      const project = importArgoAppProject(text);
      io.out(project.yaml);
      for (const note of project.notes) io.err(`note: ${note}`);
      return EXIT.ok;
    }
    const imported = importArgoApplication(text);
    io.out("# paste under `environments:` in .github/syncward.yml");
    io.out(imported.yaml);
    for (const note of imported.notes) io.err(`note: ${note}`);
    return EXIT.ok;
  } catch (err) {
    if (
      err instanceof ArgoImportError ||
      err instanceof AppProjectImportError ||
      err instanceof ClusterSecretError
    )
      throw new UsageError(`${file}: ${err.message}`);
    throw err;
  }
}

/** An Argo CD cluster Secret: kind Secret with the secret-type label `cluster`. */
function isArgoClusterSecretText(text: string): boolean {
  try {
    const doc = parse(text) as { kind?: string; metadata?: { labels?: Record<string, string> } } | null;
    return doc?.kind === "Secret" && doc.metadata?.labels?.[ARGO_SECRET_LABEL] === "cluster";
  } catch {
    return false;
  }
}
