// A repository's config under the operator's projects: today's behaviour when none are
// configured, the config narrowed by its project when one matches, a refusal otherwise.
import type { Floor } from "../config/floors.ts";
import type { SyncwardConfig } from "../config/types.ts";
import { matchProject, type RepositoryFacts } from "./match.ts";
import { narrowConfig } from "./narrow.ts";
import type { Project, ProjectsFile } from "./types.ts";

export type Binding =
  | { kind: "none-configured"; config: SyncwardConfig }
  | { kind: "matched"; project: Project; by: string; config: SyncwardConfig }
  | { kind: "unmatched"; reason: string };

export async function bindRepository(
  projects: ProjectsFile | undefined,
  fullName: string,
  config: SyncwardConfig,
  facts?: RepositoryFacts,
  operatorFloors: readonly Floor[] = [],
): Promise<Binding> {
  const match = await matchProject(projects, fullName, facts);
  switch (match.kind) {
    case "none-configured":
      return { kind: "none-configured", config };
    case "unmatched":
      return match;
    case "matched":
      return {
        ...match,
        config: narrowConfig(match.project, config, operatorFloors, {
          fullName,
          others: projects?.projects ?? [],
        }),
      };
  }
}
