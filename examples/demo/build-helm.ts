// The demo's helm (the worker-dev environment is a Helm chart): built from Go modules like the
// control plane by tools/cluster/build.sh, cached after the first build.
import { join } from "node:path";
import { type RunOptions, type RunResult, run } from "./run.ts";
import { StepFailure } from "./until.ts";

type Runner = (file: string, args: string[], options: RunOptions) => Promise<RunResult>;

/**
 * Builds helm, or finds it cached. No time limit: on an empty cache this builds helm from Go
 * modules (minutes on 2 cores); build.sh's progress lines are shown as they come, so a first run
 * does not look stuck.
 */
export async function buildHelm(
  root: string,
  runner: Runner = run,
  show: (line: string) => void = (line) => process.stderr.write(`  ${line}\n`),
): Promise<void> {
  const res = await runner("bash", [join(root, "tools", "cluster", "build.sh"), "helm"], {
    timeoutMs: 0,
    progress: (line) => {
      if (line.startsWith("[cluster build]")) show(line);
    },
  });
  if (res.code !== 0) throw new StepFailure(`building helm failed: ${res.stderr.trim().split("\n").at(-1)}`);
}
