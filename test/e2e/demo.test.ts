// `npm run demo` end to end: the demo runs as a child process against the test cluster
// (SYNCWARD_DEMO_KUBECONFIG), and every step of its story must print PASS and the demo exit 0.
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { join } from "node:path";
import { it } from "node:test";
import { ensureBuilt } from "../support/built.ts";
import { testKubeconfig } from "../support/cluster.ts";

const root = join(import.meta.dirname, "..", "..");
const STEPS = ["a", "b", "c", "d", "e", "f", "g", "h", "i", "j", "k"];
/** The demo aims at ~1 minute; past this it is interrupted (it then cleans up) and the test fails. */
const DEADLINE_MS = 240_000;

function runDemo(kubeconfig: string): Promise<{ code: number | null; output: string }> {
  ensureBuilt(); // the demo runs bin/syncward.js, i.e. dist/
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ["--import", "tsx", join(root, "examples", "demo.ts")], {
      cwd: root,
      env: { ...process.env, SYNCWARD_DEMO_KUBECONFIG: kubeconfig, NO_COLOR: "1" },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let output = "";
    child.stdout.setEncoding("utf8").on("data", (c: string) => {
      output += c;
    });
    child.stderr.setEncoding("utf8").on("data", (c: string) => {
      output += c;
    });
    // Ctrl-C, as a person would: the demo stops its controller and deletes its namespaces.
    const timer = setTimeout(() => {
      output += `\n[test] the demo ran past ${DEADLINE_MS / 1000}s: interrupting it\n`;
      child.kill("SIGINT");
    }, DEADLINE_MS);
    child.on("error", reject);
    child.on("close", (code) => {
      clearTimeout(timer);
      resolve({ code, output });
    });
  });
}

it("npm run demo plays the whole story on the cluster and every step passes", {
  timeout: DEADLINE_MS + 30_000,
}, async () => {
  const { code, output } = await runDemo(testKubeconfig());
  const summary = output.slice(output.lastIndexOf("== Summary"));
  for (const id of STEPS) {
    assert.match(output, new RegExp(`^PASS {2}${id}\\. `, "m"), `step ${id} did not pass:\n${summary}`);
  }
  assert.equal(code, 0, `the demo exited ${code}:\n${output.slice(-4000)}`);
  // It cleaned up after itself: its namespaces and its temporary repository are gone.
  assert.match(output, /namespace "payments-dev-[0-9a-f]+" deleted/);
  assert.match(output, /namespace "syncward-demo-[0-9a-f]+" deleted/);
  assert.match(output, /^removed \S*syncward-demo-/m);
  assert.match(output, new RegExp(`^${STEPS.length}\\/${STEPS.length} steps passed`, "m"));
});
