// Which project a repository belongs to: the first, in the document's order, whose repository
// globs match it or one of whose teams has access to it. No projects at all: every repository is
// on its own (today's behaviour); projects but none matching: the repository is refused.
import { repoGlobMatch } from "./glob.ts";
import type { Project, ProjectsFile } from "./types.ts";

/** The repositories (`owner/name`) a team (`org/slug`) has access to. Throws TeamLookupError. */
export type TeamRepositories = (team: string) => Promise<string[]>;

export class TeamLookupError extends Error {
  override readonly name = "TeamLookupError";
  constructor(
    readonly project: string,
    readonly team: string,
    readonly why: string,
  ) {
    super(`project ${project}: cannot list the repositories of team ${team}: ${why}`);
  }
}

export type ProjectMatch =
  | { kind: "none-configured" }
  | { kind: "matched"; project: Project; by: string }
  | { kind: "unmatched"; reason: string };

export async function matchProject(
  file: ProjectsFile | undefined,
  fullName: string,
  teamRepositories?: TeamRepositories,
): Promise<ProjectMatch> {
  if (!file) return { kind: "none-configured" };
  const name = fullName.toLowerCase();
  for (const project of file.projects) {
    const glob = project.repositories.find((g) => repoGlobMatch(g, name));
    if (glob) return { kind: "matched", project, by: `repositories: ${glob}` };
    for (const team of project.teams) {
      if (!teamRepositories) continue;
      let repos: string[];
      try {
        repos = await teamRepositories(team);
      } catch (err) {
        if (err instanceof TeamLookupError) throw err;
        throw new TeamLookupError(project.name, team, err instanceof Error ? err.message : String(err));
      }
      if (repos.some((r) => r.toLowerCase() === name))
        return { kind: "matched", project, by: `teams: ${team}` };
    }
  }
  return { kind: "unmatched", reason: unmatchedReason(file, fullName, teamRepositories !== undefined) };
}

function unmatchedReason(file: ProjectsFile, fullName: string, teamsChecked: boolean): string {
  if (file.projects.length === 0)
    return `${fullName} belongs to no project: the operator's projects document lists none, so no repository may deploy. Add a project whose repositories include "${fullName}" (or a "default" project with repositories: ["*/*"] to keep every repository deploying as before).`;
  const rules = file.projects.map((p) => {
    const parts = [
      p.repositories.length > 0 ? `repositories ${p.repositories.join(", ")}` : "",
      p.teams.length > 0 ? `teams ${p.teams.join(", ")}${teamsChecked ? "" : " (not checked here)"}` : "",
    ].filter(Boolean);
    return `${p.name} (${parts.join("; ")})`;
  });
  return `${fullName} belongs to no project, so syncward deploys nothing of it. No project's rule covers it: ${rules.join("; ")}. The operator adds "${fullName}" (or a glob matching it) to a project's repositories, or a team with access to it to a project's teams.`;
}
