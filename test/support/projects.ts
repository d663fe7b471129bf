// What the projects integration tests share: the CLI run in-process, a projects file, and a
// repository `acme/<name>` (its origin remote) that the projects' globs match.
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { stringify } from "yaml";
import type { CliIO } from "../../src/cli/io.ts";
import { main } from "../../src/cli/main.ts";
import { makeRepo } from "./git-repo.ts";

export async function run(args: string[]): Promise<{ code: number; out: string; err: string }> {
  let out = "";
  let err = "";
  const io: CliIO = { out: (t) => (out += `${t}\n`), err: (t) => (err += `${t}\n`), isTTY: false };
  const code = await main(args, io);
  return { code, out, err };
}

export const configMap = (name: string) =>
  `apiVersion: v1\nkind: ConfigMap\nmetadata: {name: ${name}}\ndata: {mode: fast}\n`;
/** A failed sync is retried with backoff like any failure (as in Argo CD): these tests want the first answer. */
export const noRetry = { syncPolicy: { retry: { limit: 0 } } };
export const service = "apiVersion: v1\nkind: Service\nmetadata: {name: web}\nspec: {ports: [{port: 80}]}\n";

export function projectsFile(projects: unknown[]): string {
  const file = join(mkdtempSync(join(tmpdir(), "syncward-projects-")), "projects.yaml");
  writeFileSync(file, stringify({ projects }));
  return file;
}

/** A repository `acme/<name>` (its origin remote) deploying `files` under app/ to `namespace`. */
export function teamRepo(
  name: string,
  namespace: string,
  files: Record<string, string>,
  env: Record<string, unknown> = {},
) {
  const repo = makeRepo({
    ".github/syncward.yml": stringify({
      environments: [{ name: "dev", source: { path: "app" }, destination: { namespace }, ...env }],
    }),
    ...Object.fromEntries(Object.entries(files).map(([f, text]) => [`app/${f}`, text])),
  });
  repo.git("remote", "add", "origin", `https://github.com/acme/${name}.git`);
  return repo;
}

export const teamA = (fields: Record<string, unknown> = {}) => ({
  name: "team-a",
  repositories: ["acme/team-a-*"],
  destinations: [{ namespace: "team-a-*" }],
  ...fields,
});

/** `--repo --kubeconfig --state-namespace [--projects]`: where every command of these tests points. */
export function where(repo: string, kubeconfig: string, state: string, projects?: string): string[] {
  return [
    "--repo",
    repo,
    "--kubeconfig",
    kubeconfig,
    "--state-namespace",
    state,
    ...(projects ? ["--projects", projects] : []),
  ];
}
