// Which project a repository belongs to: the first, in the document's order, that the operator
// made it a member of. Only what the operator controls counts, never a grant a repository admin
// can make (team access is not accepted):
// - a repository listed by name, pinned to GitHub's id for it the first time it is seen, so a
//   repository deleted and created again under the name (or another renamed to it) is not it;
// - organization custom properties, whose definition must say only the organization edits
//   their values (values_editable_by: org_actors; checked by the GitHub layer);
// - a glob, which only narrows: it binds together with the project's properties, or in a
//   project confined to each repository's own namespaces (`{repo}`) with no cluster-scoped
//   kinds, where a new repository with a matching name gains only a namespace named after itself.
// No projects at all: every repository is on its own (today's behaviour); projects but none
// matching: the repository is refused.
import { repoGlobMatch } from "./glob.ts";
import type { Project, ProjectsFile } from "./types.ts";

/** What the app can learn of a repository on GitHub; absent (the CLI): names and globs only. */
export interface RepositoryFacts {
  /** GitHub's id of the repository. */
  id(): Promise<number>;
  /** The values of these organization custom properties. @throws MembershipLookupError */
  properties(names: readonly string[]): Promise<ReadonlyMap<string, string>>;
  /** The ids listed repositories were pinned to at first sight. */
  pins: RepositoryPins;
}

export interface RepositoryPins {
  /** The id `fullName` (lowercased) was pinned to, or undefined. */
  pinned(fullName: string): Promise<number | undefined>;
  /** Pins `fullName` to `id` once; resolves with the pin kept (another replica's may win). */
  pin(fullName: string, id: number): Promise<number>;
}

export class MembershipLookupError extends Error {
  override readonly name = "MembershipLookupError";
  constructor(
    readonly project: string,
    readonly why: string,
  ) {
    super(`project ${project}: ${why}`);
  }
}

export type ProjectMatch =
  | { kind: "none-configured" }
  | { kind: "matched"; project: Project; by: string }
  | { kind: "unmatched"; reason: string };

const isGlob = (entry: string) => /[*?]/.test(entry);

/** A project whose globs alone may bind: each repository reaches only namespaces named after it. */
export function confinedToOwnNamespaces(project: Project): boolean {
  return (
    project.clusterResourceWhitelist.length === 0 &&
    project.destinations.every(
      (d) =>
        d.namespace.startsWith("!") ||
        (d.namespace.includes("{repo}") && !(d.serviceAccount ?? "").includes(":")),
    )
  );
}

export async function matchProject(
  file: ProjectsFile | undefined,
  fullName: string,
  facts?: RepositoryFacts,
): Promise<ProjectMatch> {
  if (!file) return { kind: "none-configured" };
  const notes: string[] = [];
  for (const project of file.projects) {
    let by: string | undefined;
    try {
      by = await memberBy(project, fullName, facts, notes);
    } catch (err) {
      if (err instanceof MembershipLookupError) throw err;
      throw new MembershipLookupError(project.name, err instanceof Error ? err.message : String(err));
    }
    if (by) return { kind: "matched", project, by };
  }
  return { kind: "unmatched", reason: unmatchedReason(file, fullName, notes) };
}

async function memberBy(
  project: Project,
  fullName: string,
  facts: RepositoryFacts | undefined,
  notes: string[],
): Promise<string | undefined> {
  const name = fullName.toLowerCase();
  const exact = project.repositories.find((e) => !isGlob(e) && e.toLowerCase() === name);
  if (exact) {
    if (!facts) return `repositories: ${exact}`;
    const id = await facts.id();
    const pinned = (await facts.pins.pinned(name)) ?? (await facts.pins.pin(name, id));
    if (pinned === id) return `repositories: ${exact}`;
    notes.push(
      `project ${project.name} lists ${exact}, but that name was pinned to repository id ${pinned} when syncward first saw it, and this repository is id ${id} (deleted and created again, or another renamed to it): the operator removes ${exact} from the project, and adds it again to bind this one`,
    );
    return undefined;
  }
  const glob = project.repositories.find((e) => isGlob(e) && repoGlobMatch(e, name));
  const wanted = Object.entries(project.properties);
  if (wanted.length > 0) {
    if (!facts) return undefined; // The CLI cannot read properties: such a project is the app's.
    if (project.repositories.length > 0 && !glob) return undefined;
    const values = await facts.properties(wanted.map(([k]) => k));
    if (wanted.some(([k, v]) => values.get(k) !== v)) return undefined;
    const props = wanted.map(([k, v]) => `${k}=${v}`).join(", ");
    return glob ? `repositories: ${glob} with properties ${props}` : `properties ${props}`;
  }
  if (!glob) return undefined;
  if (!facts || confinedToOwnNamespaces(project)) return `repositories: ${glob}`;
  notes.push(
    `project ${project.name}'s glob ${glob} matches the name, but anyone who may create repositories chooses names: a glob binds only together with the project's properties, or in a project whose destinations are each repository's own namespaces ("{repo}") with no cluster-scoped kinds`,
  );
  return undefined;
}

function unmatchedReason(file: ProjectsFile, fullName: string, notes: string[]): string {
  if (file.projects.length === 0)
    return `${fullName} belongs to no project: the operator's projects document lists none, so no repository may deploy. Add a project whose repositories include "${fullName}" (deploy/projects-default.yaml shows a safe default: each repository confined to a namespace named after it).`;
  const rules = file.projects.map((p) => {
    const parts = [
      p.repositories.length > 0 ? `repositories ${p.repositories.join(", ")}` : "",
      Object.keys(p.properties).length > 0
        ? `properties ${Object.entries(p.properties)
            .map(([k, v]) => `${k}=${v}`)
            .join(", ")}`
        : "",
    ].filter(Boolean);
    return `${p.name} (${parts.join("; ")})`;
  });
  const why = notes.length > 0 ? ` ${notes.join("; ")}.` : "";
  return `${fullName} belongs to no project, so syncward deploys nothing of it. No project's rule covers it: ${rules.join("; ")}.${why} The operator adds "${fullName}" to a project's repositories, or gives it a project's custom properties.`;
}
