// The demo on an empty cache: building helm from Go modules takes minutes on 2 cores, so the demo's
// build step runs build.sh with no time limit (a limit once ended a newcomer's first `npm run demo`
// after the control plane's 11-minute build) and shows its progress.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, it } from "node:test";
import { buildHelm } from "../../../examples/demo/build-helm.ts";
import { type RunOptions, timeLimitMs } from "../../../examples/demo/run.ts";
import { StepFailure } from "../../../examples/demo/until.ts";

const ROOT = join(import.meta.dirname, "..", "..", "..");

interface Call {
  file: string;
  args: string[];
  options: RunOptions;
}

function recorder(result = { code: 0, stdout: "", stderr: "" }) {
  const calls: Call[] = [];
  const runner = async (file: string, args: string[], options: RunOptions) => {
    calls.push({ file, args, options });
    options.progress?.("[cluster build] helm v3.22.0: building helm (this is the slow part on first use)");
    options.progress?.("go: downloading helm.sh/helm/v3 v3.22.0");
    return result;
  };
  return { calls, runner };
}

describe("the demo's helm build", () => {
  it("runs tools/cluster/build.sh helm with no time limit, showing build.sh's progress lines", async () => {
    const { calls, runner } = recorder();
    const shown: string[] = [];
    await buildHelm(ROOT, runner, (line) => shown.push(line));
    assert.equal(calls.length, 1);
    const [call] = calls as [Call];
    assert.deepEqual([call.file, call.args], ["bash", [join(ROOT, "tools", "cluster", "build.sh"), "helm"]]);
    assert.equal(timeLimitMs(call.options), 0, "run() is given no time limit for the build");
    assert.deepEqual(shown, [
      "[cluster build] helm v3.22.0: building helm (this is the slow part on first use)",
    ]);
  });

  it("fails the step with build.sh's last line", async () => {
    const { runner } = recorder({
      code: 1,
      stdout: "",
      stderr: "[cluster build] helm\nsyncward cluster build: helm v3.22.0: go build failed (see above).\n",
    });
    await assert.rejects(
      buildHelm(ROOT, runner, () => {}),
      (err: Error) =>
        err instanceof StepFailure &&
        err.message ===
          "building helm failed: syncward cluster build: helm v3.22.0: go build failed (see above).",
    );
  });

  it("is how npm run demo builds helm: no other call of build.sh in the demo", () => {
    const demo = readFileSync(join(ROOT, "examples", "demo.ts"), "utf8");
    assert.match(demo, /import \{ buildHelm \} from "\.\/demo\/build-helm\.ts";/);
    assert.match(demo, /await buildHelm\(root\);/);
    assert.doesNotMatch(demo, /build\.sh/, "the demo runs build.sh through buildHelm only");
  });
});
