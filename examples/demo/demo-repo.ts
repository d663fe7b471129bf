// The throwaway Git repository the demo plays in: a copy of examples/payments-config with
// namespaces of its own, so reruns (and other runs on the same cluster) never collide.
import { cpSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { run } from "./run.ts";
import { StepFailure } from "./until.ts";

const GIT_IDENTITY = [
  "-c",
  "user.name=syncward demo",
  "-c",
  "user.email=demo@syncward.invalid",
  "-c",
  "commit.gpgsign=false",
];

function yamlFiles(dir: string): string[] {
  return readdirSync(dir, { recursive: true, encoding: "utf8" })
    .map((f) => join(dir, f))
    .filter((f) => /\.ya?ml$/.test(f) && statSync(f).isFile());
}

export class DemoRepo {
  private constructor(readonly dir: string) {}

  /** Copies `example` to `dir`, renames its namespaces with `suffix`, and commits it on main. */
  static async create(example: string, dir: string, suffix: string): Promise<DemoRepo> {
    cpSync(example, dir, { recursive: true });
    for (const file of yamlFiles(dir)) {
      const text = readFileSync(file, "utf8");
      const renamed = text.replace(/\bpayments-(dev|prod)\b/g, `payments-$1-${suffix}`);
      if (renamed !== text) writeFileSync(file, renamed);
    }
    const repo = new DemoRepo(dir);
    await repo.git(["init", "-q", "-b", "main"]);
    await repo.commit("payments-config: dev and prod overlays", ["."]);
    return repo;
  }

  async git(args: string[]): Promise<string> {
    const res = await run("git", [...GIT_IDENTITY, ...args], { cwd: this.dir });
    if (res.code !== 0) throw new StepFailure(`git ${args.join(" ")} failed: ${res.stderr.trim()}`);
    return res.stdout;
  }

  read(path: string): string {
    return readFileSync(join(this.dir, path), "utf8");
  }

  write(path: string, text: string): void {
    writeFileSync(join(this.dir, path), text);
  }

  /** Stages `paths` (all changes when omitted), commits, and returns the new full SHA. */
  async commit(message: string, paths: string[] = ["-A"]): Promise<string> {
    await this.git(["add", ...paths]);
    await this.git(["commit", "-q", "-m", message]);
    return this.head();
  }

  async revert(): Promise<string> {
    await this.git(["revert", "--no-edit", "HEAD"]);
    return this.head();
  }

  async head(): Promise<string> {
    return (await this.git(["rev-parse", "HEAD"])).trim();
  }
}
