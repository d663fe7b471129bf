// The local control plane: etcd, kube-apiserver, kube-controller-manager, kube-scheduler and kwok
// as child processes on 127.0.0.1. Every process is recorded in state.json so that `down` kills
// exactly those PIDs and nothing else.
import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { closeSync, existsSync, mkdirSync, openSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { request } from "node:https";
import { createServer } from "node:net";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { makePki, type Pki } from "./pki.ts";

const here = dirname(fileURLToPath(import.meta.url));
const repoRoot = resolve(here, "..", "..");

export const COMPONENTS = [
  "etcd",
  "kube-apiserver",
  "kube-controller-manager",
  "kube-scheduler",
  "kwok",
] as const;
export type Component = (typeof COMPONENTS)[number];

/** How a component was started, so a fault test can stop it and start it again the same way. */
export interface Launch {
  bin: string;
  args: string[];
}

export interface PlaneState {
  kubeconfig: string;
  server: string;
  /** -1 for a component this plane does not run. */
  pids: Record<Component, number>;
  launches?: Partial<Record<Component, Launch>>;
  ports: Record<string, number>;
  versions: string;
  startedAt: string;
}

export class PlaneError extends Error {}

export function planeDir(): string {
  return resolve(process.env.SYNCWARD_CLUSTER_DIR ?? join(repoRoot, ".cluster"));
}

const stateFile = (dir = planeDir()) => join(dir, "state.json");
export const kubeconfigPath = (dir = planeDir()) => join(dir, "kubeconfig");

export function readState(dir = planeDir()): PlaneState | undefined {
  if (!existsSync(stateFile(dir))) return undefined;
  return JSON.parse(readFileSync(stateFile(dir), "utf8")) as PlaneState;
}

export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

function log(message: string): void {
  process.stderr.write(`[cluster] ${message}\n`);
}

/** Builds (or finds cached) binaries; build progress goes to stderr, paths come back on stdout. */
export function ensureBinaries(): Record<string, string> {
  try {
    execFileSync("go", ["version"], { stdio: "ignore" });
  } catch {
    throw new PlaneError(
      "Go is not installed or not on PATH. The local control plane is built from Go modules: install Go >= 1.26, " +
        "or run the integration tests against an existing cluster with SYNCWARD_TEST_KUBECONFIG=/path/to/kubeconfig.",
    );
  }
  let out: string;
  try {
    out = execFileSync("bash", [join(here, "build.sh"), "etcd", "kubernetes", "kwok"], {
      stdio: ["ignore", "pipe", "inherit"],
    }).toString();
  } catch {
    throw new PlaneError(
      "building the control plane failed (the build's own error is printed above). Fix the cause and run " +
        "`npm run cluster -- up` again; binaries that were built are cached and will not be rebuilt.",
    );
  }
  const paths: Record<string, string> = {};
  for (const line of out.split("\n")) {
    const eq = line.indexOf("=");
    if (eq > 0) paths[line.slice(0, eq)] = line.slice(eq + 1);
  }
  return paths;
}

async function freePort(): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const server = createServer();
    server.unref();
    server.on("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      const port = typeof address === "object" && address ? address.port : 0;
      server.close(() => resolvePort(port));
    });
  });
}

interface Running {
  name: Component;
  child: ChildProcess;
  logFile: string;
  exited?: string;
}

function start(name: Component, bin: string, args: string[], logDir: string): Running {
  const logFile = join(logDir, `${name}.log`);
  const fd = openSync(logFile, "a");
  // Detached so the plane outlives `cluster up`; each process gets its own group for a clean kill.
  const child = spawn(bin, args, { detached: true, stdio: ["ignore", fd, fd] });
  closeSync(fd);
  const running: Running = { name, child, logFile };
  child.on("exit", (code, signal) => {
    running.exited = signal ? `killed by ${signal}` : `exited with code ${code}`;
  });
  child.on("error", (err) => {
    running.exited = `could not start: ${err.message}`;
  });
  child.unref();
  return running;
}

function tail(file: string, lines = 8): string {
  if (!existsSync(file)) return "";
  return readFileSync(file, "utf8").trimEnd().split("\n").slice(-lines).join("\n");
}

function explainExit(r: Running): PlaneError {
  const logTail = tail(r.logFile);
  let cause = `${r.name} ${r.exited} right after start.`;
  if (/address already in use/i.test(logTail))
    cause += " A port it needs is already in use by another process.";
  return new PlaneError(
    `${cause} Its log (${r.logFile}) ends with:\n${logTail}\n` +
      "Everything this run started has been stopped. Fix the cause above and run `npm run cluster -- up` again.",
  );
}

function httpsGet(url: string, pki: Pki): Promise<{ status: number; body: string }> {
  return new Promise((resolveGet, reject) => {
    const req = request(
      url,
      {
        ca: readFileSync(pki.caCert),
        cert: readFileSync(pki.adminCert),
        key: readFileSync(pki.adminKey),
        timeout: 5000,
      },
      (res) => {
        let body = "";
        res.on("data", (c) => {
          body += c;
        });
        res.on("end", () => resolveGet({ status: res.statusCode ?? 0, body }));
      },
    );
    req.on("error", reject);
    req.on("timeout", () => req.destroy(new Error("timeout")));
    req.end();
  });
}

async function httpGet(url: string): Promise<number> {
  const res = await fetch(url, { signal: AbortSignal.timeout(3000) });
  return res.status;
}

async function waitFor(
  what: string,
  r: Running,
  check: () => Promise<boolean>,
  timeoutMs: number,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (r.exited) throw explainExit(r);
    try {
      if (await check()) return;
    } catch {
      // not up yet
    }
    await new Promise((t) => setTimeout(t, 250));
  }
  throw new PlaneError(
    `${what} did not become ready within ${timeoutMs / 1000}s. Its log (${r.logFile}) ends with:\n${tail(r.logFile)}\n` +
      "Everything this run started has been stopped.",
  );
}

function writeKubeconfig(file: string, server: string, pki: Pki): void {
  writeFileSync(
    file,
    [
      "apiVersion: v1",
      "kind: Config",
      "clusters:",
      "- name: syncward-local",
      "  cluster:",
      `    server: ${server}`,
      `    certificate-authority: ${pki.caCert}`,
      "users:",
      "- name: syncward-admin",
      "  user:",
      `    client-certificate: ${pki.adminCert}`,
      `    client-key: ${pki.adminKey}`,
      "contexts:",
      "- name: syncward-local",
      "  context:",
      "    cluster: syncward-local",
      "    user: syncward-admin",
      "current-context: syncward-local",
      "",
    ].join("\n"),
  );
}

const FAKE_NODE = `apiVersion: v1
kind: Node
metadata:
  name: kwok-node-0
  annotations:
    node.alpha.kubernetes.io/ttl: "0"
    kwok.x-k8s.io/node: fake
  labels:
    kubernetes.io/hostname: kwok-node-0
    kubernetes.io/os: linux
    kubernetes.io/arch: amd64
    type: kwok
status:
  allocatable: {cpu: "64", memory: 256Gi, pods: "1000"}
  capacity: {cpu: "64", memory: 256Gi, pods: "1000"}
`;

function kubectl(kubeconfig: string, args: string[], input?: string): string {
  return execFileSync("kubectl", ["--kubeconfig", kubeconfig, ...args], {
    input,
    stdio: ["pipe", "pipe", "pipe"],
  }).toString();
}

export async function isReady(state: PlaneState, dir = planeDir()): Promise<boolean> {
  if (!COMPONENTS.every((c) => state.pids[c] <= 0 || isAlive(state.pids[c]))) return false;
  try {
    const pki = makePki(join(dir, "pki"));
    const res = await httpsGet(`${state.server}/readyz`, pki);
    return res.status === 200;
  } catch {
    return false;
  }
}

export interface UpResult {
  state: PlaneState;
  alreadyUp: boolean;
}

export interface UpOptions {
  /** Where the plane keeps its data, certificates, logs and state (default: planeDir()). */
  dir?: string;
  /**
   * Run only etcd and kube-apiserver: enough for objects without controllers (ConfigMaps), at a
   * fraction of the memory. Deployments never become healthy on such a plane.
   */
  apiOnly?: boolean;
}

export async function up(options: UpOptions = {}): Promise<UpResult> {
  const dir = options.dir ?? planeDir();
  const existing = readState(dir);
  if (existing) {
    if (await isReady(existing, dir)) return { state: existing, alreadyUp: true };
    log("found a stale control plane from an earlier run; stopping what is left of it");
    await down(dir);
  }
  const bins = ensureBinaries();
  mkdirSync(join(dir, "logs"), { recursive: true });
  const pki = makePki(join(dir, "pki"));
  const kubeconfig = kubeconfigPath(dir);
  const ports = {
    etcdClient: await freePort(),
    etcdPeer: await freePort(),
    apiserver: await freePort(),
    controllerManager: await freePort(),
    scheduler: await freePort(),
    kwok: await freePort(),
  };
  const server = `https://127.0.0.1:${ports.apiserver}`;
  writeKubeconfig(kubeconfig, server, pki);
  const logDir = join(dir, "logs");
  const started: Running[] = [];
  const bin = (name: string): string => {
    const path = bins[name];
    if (!path || !existsSync(path))
      throw new PlaneError(`binary for ${name} is missing after the build (${path})`);
    return path;
  };
  const launches: Partial<Record<Component, Launch>> = {};
  const launch = (name: Component, args: string[]): Running => {
    launches[name] = { bin: bin(name), args };
    const r = start(name, bin(name), args, logDir);
    started.push(r);
    return r;
  };
  try {
    const etcdUrl = `http://127.0.0.1:${ports.etcdClient}`;
    const peerUrl = `http://127.0.0.1:${ports.etcdPeer}`;
    log(`starting etcd in ${dir}`);
    const etcd = launch("etcd", [
      "--name=syncward",
      `--data-dir=${join(dir, "etcd")}`,
      `--listen-client-urls=${etcdUrl}`,
      `--advertise-client-urls=${etcdUrl}`,
      `--listen-peer-urls=${peerUrl}`,
      `--initial-advertise-peer-urls=${peerUrl}`,
      `--initial-cluster=syncward=${peerUrl}`,
      "--unsafe-no-fsync=true",
      "--log-level=warn",
    ]);
    await waitFor("etcd", etcd, () => componentReady("etcd", ports, server, pki), 30_000);

    log("starting kube-apiserver");
    const apiserver = launch("kube-apiserver", [
      `--etcd-servers=${etcdUrl}`,
      "--bind-address=127.0.0.1",
      "--advertise-address=127.0.0.1",
      `--secure-port=${ports.apiserver}`,
      `--cert-dir=${join(dir, "apiserver-certs")}`,
      `--tls-cert-file=${pki.serverCert}`,
      `--tls-private-key-file=${pki.serverKey}`,
      `--client-ca-file=${pki.caCert}`,
      "--authorization-mode=RBAC",
      "--service-account-issuer=https://kubernetes.default.svc.cluster.local",
      `--service-account-key-file=${pki.saPub}`,
      `--service-account-signing-key-file=${pki.saKey}`,
      "--service-cluster-ip-range=10.0.0.0/24",
      "--allow-privileged=true",
      "--endpoint-reconciler-type=none",
      // As envtest does: pods created right after their namespace must not race the default ServiceAccount.
      "--disable-admission-plugins=ServiceAccount",
      "--v=0",
    ]);
    await waitFor(
      "kube-apiserver",
      apiserver,
      () => componentReady("kube-apiserver", ports, server, pki),
      90_000,
    );

    if (options.apiOnly)
      return { state: record(dir, kubeconfig, server, ports, bins, started, launches), alreadyUp: false };
    const delegated = [
      `--kubeconfig=${kubeconfig}`,
      `--authentication-kubeconfig=${kubeconfig}`,
      `--authorization-kubeconfig=${kubeconfig}`,
    ];
    log("starting kube-controller-manager, kube-scheduler and kwok");
    launch("kube-controller-manager", [
      ...delegated,
      "--bind-address=127.0.0.1",
      `--secure-port=${ports.controllerManager}`,
      `--root-ca-file=${pki.caCert}`,
      `--service-account-private-key-file=${pki.saKey}`,
      `--cluster-signing-cert-file=${pki.caCert}`,
      `--cluster-signing-key-file=${pki.caKey}`,
      "--leader-elect=false",
      "--controllers=*",
    ]);
    launch("kube-scheduler", [
      ...delegated,
      "--bind-address=127.0.0.1",
      `--secure-port=${ports.scheduler}`,
      "--leader-elect=false",
    ]);
    const kwok = launch("kwok", [
      `--kubeconfig=${kubeconfig}`,
      `--config=${bin("kwok-stages")}`,
      // Ours, after the module's: pods that fail or succeed on request (see the file).
      `--config=${join(import.meta.dirname, "kwok-stages.yaml")}`,
      "--manage-all-nodes=false",
      "--manage-nodes-with-annotation-selector=kwok.x-k8s.io/node=fake",
      "--node-lease-duration-seconds=40",
      `--server-address=127.0.0.1:${ports.kwok}`,
      "--cidr=10.244.0.0/16",
    ]);

    log("creating a kwok-managed node and waiting for it to be Ready");
    kubectl(kubeconfig, ["apply", "-f", "-"], FAKE_NODE);
    await waitFor(
      "the kwok node",
      kwok,
      async () =>
        kubectl(kubeconfig, [
          "get",
          "node",
          "kwok-node-0",
          "-o",
          "jsonpath={.status.conditions[?(@.type=='Ready')].status}",
        ]) === "True",
      60_000,
    );
    for (const r of started) if (r.exited) throw explainExit(r);
    return { state: record(dir, kubeconfig, server, ports, bins, started, launches), alreadyUp: false };
  } catch (err) {
    await stopPids(started.map((r) => r.child.pid).filter((p): p is number => typeof p === "number"));
    rmSync(dir, { recursive: true, force: true });
    throw err;
  }
}

async function stopPids(pids: number[]): Promise<void> {
  for (const pid of pids) {
    try {
      process.kill(pid, "SIGTERM");
    } catch {
      // already gone
    }
  }
  // The plane's data is thrown away: a short grace period, then SIGKILL.
  const deadline = Date.now() + 3_000;
  while (pids.some(isAlive) && Date.now() < deadline) await new Promise((t) => setTimeout(t, 100));
  for (const pid of pids.filter(isAlive)) {
    try {
      process.kill(pid, "SIGKILL");
    } catch {
      // already gone
    }
  }
}

function record(
  dir: string,
  kubeconfig: string,
  server: string,
  ports: Record<string, number>,
  bins: Record<string, string>,
  started: Running[],
  launches: Partial<Record<Component, Launch>>,
): PlaneState {
  const pids = Object.fromEntries(COMPONENTS.map((c) => [c, -1])) as Record<Component, number>;
  for (const r of started) pids[r.name] = r.child.pid ?? -1;
  const state: PlaneState = {
    kubeconfig,
    server,
    pids,
    launches,
    ports,
    versions: bins.versions ?? "",
    startedAt: new Date().toISOString(),
  };
  writeFileSync(stateFile(dir), `${JSON.stringify(state, null, 2)}\n`);
  return state;
}

/** etcd answers /health, kube-apiserver /readyz; the others have no check here. */
async function componentReady(
  name: Component,
  ports: Record<string, number>,
  server: string,
  pki: Pki,
): Promise<boolean> {
  if (name === "etcd") return (await httpGet(`http://127.0.0.1:${ports.etcdClient}/health`)) === 200;
  if (name === "kube-apiserver") return (await httpsGet(`${server}/readyz`, pki)).status === 200;
  return true;
}

function mustState(dir: string): PlaneState {
  // The plane in .cluster/ is shared by every test run on this machine: faults go to private ones.
  if (resolve(dir) === resolve(repoRoot, ".cluster"))
    throw new PlaneError(`refusing to stop or start a component of the shared plane in ${dir}`);
  const state = readState(dir);
  if (!state) throw new PlaneError(`no control plane is recorded in ${dir}`);
  return state;
}

/**
 * Stops one component of the plane in `dir` (for fault tests on a private plane; never the shared
 * one). The signal is sent before the first await, so a caller can stop it at an exact moment.
 */
export async function stopComponent(
  name: Component,
  dir: string,
  signal: NodeJS.Signals = "SIGKILL",
): Promise<void> {
  const state = mustState(dir);
  const pid = state.pids[name];
  if (pid <= 0) throw new PlaneError(`${name} is not part of the plane in ${dir}`);
  try {
    process.kill(pid, signal);
  } catch {
    // already gone
  }
  while (isAlive(pid)) await new Promise((t) => setTimeout(t, 50));
}

/** Starts a stopped component again with the arguments it first had, and waits until it is ready. */
export async function startComponent(name: Component, dir: string): Promise<void> {
  const state = mustState(dir);
  const spec = state.launches?.[name];
  if (!spec) throw new PlaneError(`the plane in ${dir} has no record of how ${name} was started`);
  if (state.pids[name] > 0 && isAlive(state.pids[name])) throw new PlaneError(`${name} is still running`);
  const r = start(name, spec.bin, spec.args, join(dir, "logs"));
  state.pids[name] = r.child.pid ?? -1;
  writeFileSync(stateFile(dir), `${JSON.stringify(state, null, 2)}\n`);
  const pki = makePki(join(dir, "pki"));
  await waitFor(name, r, () => componentReady(name, state.ports, state.server, pki), 90_000);
}

export async function down(dir = planeDir()): Promise<boolean> {
  const state = readState(dir);
  if (state) {
    // Stop dependants first so nothing logs errors about a vanished API server.
    await stopPids(
      [...COMPONENTS]
        .reverse()
        .map((c) => state.pids[c])
        .filter((p) => p > 0),
    );
  }
  const existed = existsSync(dir);
  rmSync(dir, { recursive: true, force: true });
  return Boolean(state) || existed;
}

/** Resident memory of the recorded processes in bytes (Linux /proc), for status and benchmarks. */
export function rssBytes(state: PlaneState): Record<Component, number> {
  const out = {} as Record<Component, number>;
  for (const c of COMPONENTS) {
    try {
      const status = readFileSync(`/proc/${state.pids[c]}/status`, "utf8");
      const kb = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0);
      out[c] = kb * 1024;
    } catch {
      out[c] = 0;
    }
  }
  return out;
}
