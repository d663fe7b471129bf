// Runs the test suite with Node's built-in runner so that its summary closes the output.
//   unit: test/unit and test/app (no cluster needed)
//   all:  everything; starts the local control plane once (or reuses one already up, or uses
//         SYNCWARD_TEST_KUBECONFIG) and stops it afterwards if this run started it. syncward's
//         ServiceAccount (deploy/'s RBAC) gets a kubeconfig next to the admin one, in
//         SYNCWARD_TEST_SA_KUBECONFIG. Files that name SYNCWARD_TEST_KUBECONFIG_2 get a second
//         plane beside it (in <plane dir>-2, or the cluster SYNCWARD_TEST_KUBECONFIG_2 names),
//         started only when such a file is in the run.
// Extra arguments are test files or folders to run instead of the default set.
import { spawnSync } from "node:child_process";
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { provisionAccount } from "../test/support/syncward-account.ts";
import { down, PlaneError, planeDir, up } from "./cluster/plane.ts";
import { describeMissing, missingTools } from "./prerequisites.ts";

const root = join(import.meta.dirname, "..");
const [mode = "all", ...only] = process.argv.slice(2);

function testFiles(dir: string): string[] {
  if (!existsSync(dir)) return [];
  if (statSync(dir).isFile()) return [dir];
  return readdirSync(dir, { recursive: true, encoding: "utf8" })
    .filter((f) => f.endsWith(".test.ts"))
    .map((f) => join(dir, f))
    .sort();
}

const unitDirs = ["test/unit", "test/app"];
const allDirs = [...unitDirs, "test/integration", "test/e2e"];
const targets = only.length > 0 ? only : mode === "unit" ? unitDirs : allDirs;
const files = targets.flatMap((t) => testFiles(join(root, t))).map((f) => relative(root, f));
const needsCluster = mode !== "unit" && files.some((f) => /^test\/(integration|e2e)\//.test(f));

// The programs the tests run, looked for first: a missing one is named with how to install it.
const missing = missingTools(files);
if (missing.length > 0) {
  process.stderr.write(`[tests] ${describeMissing(missing)}`);
  process.exit(1);
}

const env = { ...process.env };
let startedHere = false;
if (needsCluster) {
  if (process.env.SYNCWARD_TEST_KUBECONFIG) {
    env.KUBECONFIG = process.env.SYNCWARD_TEST_KUBECONFIG;
    process.stderr.write(`[tests] using the existing cluster in ${env.KUBECONFIG}\n`);
  } else {
    try {
      const { state, alreadyUp } = await up();
      startedHere = !alreadyUp && !process.env.SYNCWARD_KEEP_CLUSTER;
      env.SYNCWARD_TEST_KUBECONFIG = state.kubeconfig;
      process.stderr.write(`[tests] control plane ${alreadyUp ? "reused" : "started"} at ${state.server}\n`);
    } catch (err) {
      // Never skip integration tests silently: a plane that cannot start fails the suite.
      process.stderr.write(
        `[tests] the local control plane could not start, so the integration tests cannot run:\n${
          err instanceof PlaneError ? err.message : String(err)
        }\n`,
      );
      process.exit(1);
    }
  }
}

if (needsCluster && env.SYNCWARD_TEST_KUBECONFIG) {
  // syncward runs as deploy/'s ServiceAccount in the tests; one token for the whole run.
  const admin = env.SYNCWARD_TEST_KUBECONFIG;
  try {
    env.SYNCWARD_TEST_SA_KUBECONFIG = provisionAccount(admin, join(dirname(admin), "syncward-sa.kubeconfig"));
  } catch (err) {
    process.stderr.write(`[tests] syncward's test ServiceAccount could not be set up:\n${String(err)}\n`);
    if (startedHere) await down();
    process.exit(1);
  }
}

// A second plane (its own etcd, kube-apiserver, controllers and kwok) only for a run with files that
// deploy to two clusters: they name SYNCWARD_TEST_KUBECONFIG_2. It costs ~10-20 s and ~400 MB.
const needsSecond =
  needsCluster &&
  !process.env.SYNCWARD_TEST_KUBECONFIG_2 &&
  files.some((f) => readFileSync(join(root, f), "utf8").includes("SYNCWARD_TEST_KUBECONFIG_2"));
const secondDir = `${planeDir()}-2`;
let secondStartedHere = false;
if (process.env.SYNCWARD_TEST_KUBECONFIG_2)
  env.SYNCWARD_TEST_KUBECONFIG_2 = process.env.SYNCWARD_TEST_KUBECONFIG_2;
else if (needsSecond) {
  const t0 = Date.now();
  try {
    const { state, alreadyUp } = await up({ dir: secondDir });
    secondStartedHere = !alreadyUp && !process.env.SYNCWARD_KEEP_CLUSTER;
    env.SYNCWARD_TEST_KUBECONFIG_2 = state.kubeconfig;
    env.SYNCWARD_TEST_SA_KUBECONFIG_2 = provisionAccount(
      state.kubeconfig,
      join(dirname(state.kubeconfig), "syncward-sa.kubeconfig"),
    );
    process.stderr.write(
      `[tests] second control plane ${alreadyUp ? "reused" : "started"} at ${state.server} (${((Date.now() - t0) / 1000).toFixed(1)} s)\n`,
    );
  } catch (err) {
    process.stderr.write(`[tests] the second control plane could not start:\n${String(err)}\n`);
    if (startedHere) await down();
    process.exit(1);
  }
}

const concurrency = process.env.SYNCWARD_TEST_CONCURRENCY ?? "2";
const result = spawnSync(
  process.execPath,
  ["--import", "tsx", "--test", `--test-concurrency=${concurrency}`, "--test-reporter=spec", ...files],
  { cwd: root, env, stdio: "inherit" },
);
if (secondStartedHere) await down(secondDir);
if (startedHere) await down();
process.exit(result.status ?? 1);
