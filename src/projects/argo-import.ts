// Converts an Argo CD AppProject into one project of syncward's projects document. Argo CD's
// fields that syncward has (sourceRepos on GitHub, destinations, destinationServiceAccounts,
// clusterResourceWhitelist, namespaceResourceBlacklist, syncWindows) carry over; the rest is
// dropped with a note saying why, and a rule that cannot be kept without widening is refused.
import { stringify } from "yaml";
import { formatPath } from "../config/config-error.ts";
import { parseYamlSafely } from "../config/safe-yaml.ts";
import { safeParseProjects } from "./schema.ts";
import type { Project } from "./types.ts";

export class AppProjectImportError extends Error {
  override readonly name = "AppProjectImportError";
  constructor(readonly problems: string[]) {
    super(`cannot import the Argo CD AppProject:\n${problems.map((p) => `  - ${p}`).join("\n")}`);
  }
}

export interface AppProjectImport {
  /** YAML to paste under `projects:` (notes as comments). */
  yaml: string;
  project: Project;
  notes: string[];
}

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => typeof v === "object" && v !== null && !Array.isArray(v);
const list = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);
const IN_CLUSTER_SERVER = /^https:\/\/kubernetes\.default\.svc(?:\.cluster\.local)?(?::443)?\/?$/;
const DROPPED: Record<string, string> = {
  roles:
    "roles (Argo CD's project RBAC and tokens): syncward's commands use GitHub permissions (commands:, approval:)",
  signatureKeys: "signatureKeys: use floors.requireSignedCommits (GitHub's Verified) instead of GPG key ids",
  orphanedResources: "orphanedResources: syncward always reports undeclared objects and never deletes them",
  sourceNamespaces: "sourceNamespaces: syncward has no Application objects",
  namespaceResourceWhitelist:
    "namespaceResourceWhitelist: syncward denies namespaced kinds with namespaceResourceBlacklist only; narrow the project's ServiceAccount (serviceAccount:) to allow a few kinds",
  clusterResourceBlacklist:
    "clusterResourceBlacklist: syncward allows cluster-scoped kinds with clusterResourceWhitelist only",
  permitOnlyProjectScopedClusters:
    "permitOnlyProjectScopedClusters: syncward's clusters are kubeconfig contexts",
};

export function isAppProjectText(text: string): boolean {
  try {
    const data = parseYamlSafely(text, "input").data;
    return isObject(data) && data.kind === "AppProject";
  } catch {
    return false;
  }
}

/** `https://github.com/acme/team-a-*.git`, `git@github.com:acme/x`, `*` -> `owner/name` globs. */
function repositoryGlob(url: string): string | undefined {
  if (url === "*") return "*/*";
  const m = /^(?:https?:\/\/|git@|ssh:\/\/git@)github\.com[/:]([^/\s]+)\/([^/\s]+?)(?:\.git)?\/?$/.exec(url);
  return m ? `${m[1]}/${m[2]}` : undefined;
}

export function importArgoAppProject(yamlText: string): AppProjectImport {
  const { data } = parseYamlSafely(yamlText, "AppProject");
  if (!isObject(data) || data.apiVersion !== "argoproj.io/v1alpha1" || data.kind !== "AppProject")
    throw new AppProjectImportError(["expected apiVersion argoproj.io/v1alpha1 and kind AppProject"]);
  const metadata = isObject(data.metadata) ? data.metadata : {};
  const spec = isObject(data.spec) ? data.spec : {};
  const notes: string[] = [];
  const problems: string[] = [];
  const out: Json = { name: metadata.name };
  if (typeof spec.description === "string") out.description = spec.description;

  const repositories: string[] = [];
  for (const [i, repo] of list(spec.sourceRepos).entries()) {
    const url = String(repo);
    if (url.startsWith("!")) {
      problems.push(
        `spec.sourceRepos[${i}] ${JSON.stringify(url)}: syncward has no negated repositories; list the ones the project covers`,
      );
      continue;
    }
    const glob = repositoryGlob(url);
    if (glob) repositories.push(glob);
    else notes.push(`spec.sourceRepos[${i}] ${JSON.stringify(url)} is not a GitHub repository: dropped`);
  }
  out.repositories = repositories;
  notes.push(
    "properties: select repositories by an organization custom property only the organization may set, if any",
  );

  const accounts = list(spec.destinationServiceAccounts).filter(isObject);
  const destinations: Json[] = [];
  for (const [i, raw] of list(spec.destinations).entries()) {
    if (!isObject(raw)) continue;
    const d: Json = {
      namespace: typeof raw.namespace === "string" && raw.namespace !== "" ? raw.namespace : "*",
    };
    const server = typeof raw.server === "string" ? raw.server : undefined;
    const name = typeof raw.name === "string" ? raw.name : undefined;
    if (name === "in-cluster" || (server !== undefined && IN_CLUSTER_SERVER.test(server))) d.inCluster = true;
    else if (name !== undefined && name !== "*") d.context = name;
    else if (server !== undefined && server !== "*")
      notes.push(
        `spec.destinations[${i}].server ${server}: syncward names clusters by kubeconfig context; set context: on this destination (it allows any cluster until then)`,
      );
    const account = accounts.find(
      (a) => typeof a.namespace === "string" && (a.namespace === d.namespace || a.namespace === "*"),
    );
    if (typeof account?.defaultServiceAccount === "string") d.serviceAccount = account.defaultServiceAccount;
    destinations.push(d);
  }
  out.destinations = destinations;
  if (accounts.length > 0 && !destinations.some((d) => d.serviceAccount))
    notes.push(
      "spec.destinationServiceAccounts name no namespace of spec.destinations: set serviceAccount: by hand",
    );

  const kinds = (field: string) =>
    list(spec[field])
      .filter(isObject)
      .map((k, i) => {
        if (typeof k.name === "string" && k.name !== "")
          notes.push(
            `spec.${field}[${i}].name ${JSON.stringify(k.name)}: syncward matches kinds, not names; dropped`,
          );
        return { group: String(k.group ?? ""), kind: String(k.kind ?? "") };
      });
  out.clusterResourceWhitelist = kinds("clusterResourceWhitelist");
  out.namespaceResourceBlacklist = kinds("namespaceResourceBlacklist");

  const windows = list(spec.syncWindows).filter(isObject);
  if (windows.length > 0)
    out.syncWindows = windows.map((w, i) => {
      const scoped = ["applications", "namespaces", "clusters"].filter((f) =>
        list(w[f]).some((v) => v !== "*"),
      );
      if (scoped.length > 0)
        notes.push(
          `spec.syncWindows[${i}] is limited to some ${scoped.join("/")} in Argo CD; in syncward a project window holds every environment of the project`,
        );
      return {
        kind: w.kind,
        schedule: w.schedule,
        duration: w.duration,
        ...(w.timeZone ? { timeZone: w.timeZone } : {}),
        ...(w.manualSync ? { manualSync: true } : {}),
      };
    });

  for (const [field, why] of Object.entries(DROPPED))
    if (spec[field] !== undefined && !(Array.isArray(spec[field]) && spec[field].length === 0))
      notes.push(`spec.${why}`);
  if (problems.length > 0) throw new AppProjectImportError(problems);

  const header = [
    `# Imported from Argo CD AppProject ${JSON.stringify(String(metadata.name ?? ""))}: paste under \`projects:\` in projects.yaml`,
    ...notes.map((note) => `# NOTE: ${note}`),
  ];
  const yaml = `${header.join("\n")}\n${stringify([out], { lineWidth: 0 })}`;
  const result = safeParseProjects({ projects: parseYamlSafely(yaml, "imported project").data });
  if (!result.success)
    throw new AppProjectImportError(
      result.issues.map((issue) => `${formatPath(issue.path.slice(2)) || "project"}: ${issue.message}`),
    );
  return { yaml, project: result.data.projects[0] as Project, notes };
}
