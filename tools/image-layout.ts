// The image's contents without a container engine: reads the Dockerfile's runtime stage, assembles
// the files it copies in a temporary root (helm and kubectl as tools/cluster/build.sh builds them
// from tools/cluster/versions.env, dist/, the production node_modules of package-lock.json, the
// context's files), then runs the CLI, the app and a Helm render from it with the stage's ENV and a
// PATH of that root alone plus the node binary, as the image's /usr/local/bin holds node.
//
//   node --import tsx tools/image-layout.ts     (CI: .ci/run, "image layout")
//
// A runtime COPY this check cannot reproduce fails it: adding a file to the image means teaching
// the check where it comes from. What still needs a real `docker build` is listed in the Dockerfile.
import { execFileSync, spawn, spawnSync } from "node:child_process";
import { generateKeyPairSync, randomBytes } from "node:crypto";
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  realpathSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { createServer } from "node:net";
import { homedir, tmpdir } from "node:os";
import { dirname, join, posix } from "node:path";

const ROOT = join(import.meta.dirname, "..");

export interface Instruction {
  op: string;
  args: string;
}
export interface Stage {
  name: string;
  instructions: Instruction[];
}

/** The Dockerfile's stages, continuation lines joined and comments dropped. */
export function parseStages(dockerfile: string): Stage[] {
  const lines = dockerfile
    .split("\n")
    .filter((l) => !/^\s*#/.test(l))
    .join("\n")
    .replace(/\\\n/g, " ")
    .split("\n")
    .map((l) => l.trim())
    .filter(Boolean);
  const stages: Stage[] = [];
  for (const line of lines) {
    const [op = "", ...rest] = line.split(/\s+/);
    const args = rest.join(" ");
    if (op.toUpperCase() === "FROM") {
      const name = /\bAS\s+(\S+)\s*$/i.exec(args)?.[1] ?? String(stages.length);
      stages.push({ name, instructions: [] });
    } else stages.at(-1)?.instructions.push({ op: op.toUpperCase(), args });
  }
  return stages;
}

export interface Copy {
  from?: string;
  sources: string[];
  dest: string;
}

/** The runtime stage's COPY instructions (destinations made absolute) and its ENV. */
export function runtimeLayout(stage: Stage): { copies: Copy[]; env: Record<string, string> } {
  let workdir = "/";
  const copies: Copy[] = [];
  const env: Record<string, string> = {};
  for (const { op, args } of stage.instructions) {
    if (op === "WORKDIR") workdir = posix.resolve(workdir, args);
    if (op === "ENV") {
      for (const m of args.matchAll(/([A-Za-z_][A-Za-z0-9_]*)=("([^"]*)"|\S*)/g)) env[m[1]!] = m[3] ?? m[2]!;
    }
    if (op !== "COPY") continue;
    const words = args.split(/\s+/);
    const from = words.find((w) => w.startsWith("--from="))?.slice("--from=".length);
    const paths = words.filter((w) => !w.startsWith("--"));
    const dest = posix.resolve(workdir, paths.at(-1)!);
    copies.push({
      ...(from ? { from } : {}),
      sources: paths.slice(0, -1),
      dest: paths.at(-1)!.endsWith("/") ? `${dest}/` : dest,
    });
  }
  return { copies, env };
}

function versions(): Record<"helm" | "kubernetes" | "node", string> {
  const out = execFileSync(
    "bash",
    ["-c", 'source tools/cluster/versions.env; echo "$HELM_VERSION $KUBERNETES_VERSION $IMAGE_NODE_VERSION"'],
    { cwd: ROOT },
  )
    .toString()
    .trim()
    .split(" ");
  return { helm: out[0]!, kubernetes: out[1]!, node: out[2]! };
}

/** The Node version of the Dockerfile's NODE_IMAGE default (node:<version>-<variant>). */
export function dockerfileNodeVersion(dockerfile: string): string | undefined {
  return /^ARG NODE_IMAGE=node:(\d+\.\d+\.\d+)-/m.exec(dockerfile)?.[1];
}

/**
 * The modules `go version -m` lists for a Go binary, as path@version: the main module and each
 * dependency, or the module that replaces it.
 */
export function goModules(goVersionOutput: string): string[] {
  const modules: string[] = [];
  for (const line of goVersionOutput.split("\n")) {
    const [, kind, path, version] = line.split("\t");
    if (kind === "mod" || kind === "dep") modules.push(`${path}@${version}`);
    else if (kind === "=>") {
      modules.pop();
      if (version) modules.push(`${path}@${version}`);
    }
  }
  return modules;
}

function clusterCache(): string {
  return (
    process.env.SYNCWARD_CLUSTER_CACHE ??
    join(process.env.XDG_CACHE_HOME ?? join(homedir(), ".cache"), "syncward", "cluster")
  );
}

/** A binary the tools stage builds, from build.sh's cache; kubectl may fall back to the PATH's (said so). */
function toolBinary(name: string, notes: string[]): string {
  const v = versions();
  const built =
    name === "helm"
      ? join(clusterCache(), `helm-${v.helm}`, "bin", "helm")
      : join(clusterCache(), `kubernetes-${v.kubernetes}`, "bin", name);
  if (existsSync(built)) return built;
  const fallback =
    name === "kubectl" ? spawnSync("bash", ["-c", "command -v kubectl"]).stdout.toString().trim() : "";
  if (!fallback)
    throw new Error(
      `${built} is missing: build it with tools/cluster/build.sh ${name === "helm" ? "helm" : "kubectl"}`,
    );
  notes.push(
    `kubectl: ${built} is not built; used ${fallback} (tools/cluster/build.sh kubectl builds the image's version)`,
  );
  return realpathSync(fallback);
}

/** The packages `npm ci --omit=dev` installs: package-lock.json's entries that are not dev-only. */
export function productionPackages(lock: {
  packages: Record<string, { dev?: boolean; link?: boolean }>;
}): string[] {
  return Object.entries(lock.packages)
    .filter(([path, meta]) => path.startsWith("node_modules/") && !meta.dev && !meta.link)
    .map(([path]) => path);
}

function copyProductionModules(dest: string): void {
  const lock = JSON.parse(readFileSync(join(ROOT, "package-lock.json"), "utf8"));
  for (const path of productionPackages(lock)) {
    const from = join(ROOT, path);
    if (!existsSync(from))
      throw new Error(`${path} (a production dependency in package-lock.json) is not installed: run npm ci`);
    // Nested packages are copied with their parent first; copying again only refreshes them.
    cpSync(from, join(dest, path.slice("node_modules/".length)), { recursive: true, dereference: true });
  }
}

/** Writes one COPY of the runtime stage into `root`, from where the local tooling has it. */
function assemble(copy: Copy, root: string, notes: string[]): void {
  const target = join(root, copy.dest);
  for (const source of copy.sources) {
    const into =
      copy.dest.endsWith("/") || copy.sources.length > 1 ? join(target, posix.basename(source)) : target;
    mkdirSync(dirname(into), { recursive: true });
    const key = `${copy.from ?? "context"}:${source}`;
    if (key === "tools:/tools/helm" || key === "tools:/tools/kubectl") {
      cpSync(toolBinary(posix.basename(source), notes), into, { dereference: true });
    } else if (key === "tools:/tools/licenses") {
      execFileSync(
        "bash",
        ["tools/cluster/licenses.sh", into, toolBinary("helm", notes), toolBinary("kubectl", notes)],
        { cwd: ROOT, stdio: ["ignore", "ignore", "inherit"] },
      );
    } else if (key === "build:/app/dist") {
      if (!existsSync(join(ROOT, "dist", "build-info.json")))
        execFileSync(process.execPath, ["tools/build.mjs"], { cwd: ROOT, stdio: "inherit" });
      cpSync(join(ROOT, "dist"), into, { recursive: true });
    } else if (key === "deps:/app/node_modules") {
      copyProductionModules(into);
    } else if (!copy.from) {
      cpSync(join(ROOT, source), into, { recursive: true });
    } else {
      throw new Error(
        `the runtime stage copies ${source} from stage ${copy.from}, which this check cannot assemble: teach tools/image-layout.ts where it comes from`,
      );
    }
  }
}

/**
 * What the assembled runtime must hold besides what runs, each as [what, problem or undefined]:
 * syncward's LICENSE (and a NOTICE, should one appear), the license files of every module compiled
 * into helm and kubectl, and the Node version the Dockerfile and versions.env agree on.
 */
function contents(root: string, dockerfile: string, copies: Copy[]): Array<[string, string | undefined]> {
  const results: Array<[string, string | undefined]> = [];
  for (const name of ["LICENSE", "NOTICE"]) {
    if (name === "NOTICE" && !existsSync(join(ROOT, name))) continue;
    const copy = copies.find((c) => !c.from && c.sources.includes(name));
    const at =
      copy &&
      join(root, copy.dest.endsWith("/") || copy.sources.length > 1 ? join(copy.dest, name) : copy.dest);
    results.push([
      `syncward's ${name}${copy ? ` at ${at?.slice(root.length)}` : ""}`,
      !copy
        ? `the runtime stage does not copy ${name}`
        : readFileSync(at!, "utf8") === readFileSync(join(ROOT, name), "utf8")
          ? undefined
          : `${at} differs from ${name}`,
    ]);
  }
  const licenses = copies.find((c) => c.from === "tools" && c.sources.includes("/tools/licenses"));
  if (!licenses)
    results.push(["helm's and kubectl's licenses", "the runtime stage does not copy /tools/licenses"]);
  else {
    const dir = join(root, licenses.dest);
    const index = readFileSync(join(dir, "MODULES"), "utf8");
    const unlicensed = /^No license or notice file at the root of: (.*)$/m.exec(index)?.[1]?.split(" ") ?? [];
    for (const copy of copies.filter((c) => c.from === "tools" && c.sources[0] !== "/tools/licenses")) {
      const binary = join(root, copy.dest);
      const listed = spawnSync("go", ["version", "-m", binary], { encoding: "utf8" });
      if (listed.error || listed.status !== 0) {
        results.push([
          `${copy.dest}'s licenses`,
          `go version -m failed (Go is needed here): ${listed.error ?? listed.stderr}`,
        ]);
        continue;
      }
      const modules = goModules(listed.stdout);
      const missing = modules.filter((m) => !existsSync(join(dir, m)) && !unlicensed.includes(m));
      if (!existsSync(join(dir, "go", "LICENSE"))) missing.push("go (the standard library)");
      results.push([
        `${copy.dest}: the license files of its ${modules.length} modules and Go's in ${licenses.dest}`,
        missing.length > 0 ? `none for ${missing.join(", ")}` : undefined,
      ]);
    }
  }
  const node = versions().node;
  const fromDockerfile = dockerfileNodeVersion(dockerfile);
  results.push([
    `the image's Node ${node} (tools/cluster/versions.env) is the Dockerfile's NODE_IMAGE default`,
    fromDockerfile === node ? undefined : `NODE_IMAGE says ${fromDockerfile ?? "no node:<version>-..."}`,
  ]);
  return results;
}

interface Check {
  what: string;
  args: string[];
  expect: (out: string, code: number | null) => string | undefined;
}

const RENDER = `
import { render } from "./dist/source/render.js";
const [tree, path] = process.argv.slice(1);
const out = await render(tree, path, { helmContext: { releaseName: "layout", namespace: "layout" } });
console.log(out.renderer, out.objects.map((o) => o.kind + "/" + o.metadata.name).sort().join(" "));
`;

function checks(tree: string): Check[] {
  return [
    {
      what: "the CLI",
      args: ["bin/syncward.js", "--version"],
      expect: (out, code) => (code === 0 && /\d+\.\d+/.test(out) ? undefined : "no version"),
    },
    {
      what: "the app's modules load",
      args: ["--input-type=module", "-e", 'await import("./dist/github/app.js"); console.log("loaded")'],
      expect: (out, code) => (code === 0 && out.includes("loaded") ? undefined : "import failed"),
    },
    {
      what: "a Helm chart render (helm)",
      args: ["--input-type=module", "-e", RENDER, tree, "web"],
      expect: (out, code) =>
        code === 0 && /^helm .*Deployment\/layout-web/m.test(out) ? undefined : "no Deployment rendered",
    },
    {
      what: "a kustomize render with helmCharts (kubectl and helm)",
      args: ["--input-type=module", "-e", RENDER, tree, "kustomize-helm"],
      expect: (out, code) => (code === 0 && /^kustomize .*k-/m.test(out) ? undefined : "no object rendered"),
    },
  ];
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/**
 * The image's CMD: the app starts with a throwaway key and a cluster that does not answer, its
 * /healthz answers, and SIGTERM stops it with exit code 0. Returns a problem or undefined.
 */
async function checkServer(
  cwd: string,
  env: Record<string, string>,
  cmd: string[],
): Promise<string | undefined> {
  const port = await freePort();
  const kubeconfig = join(env.TMPDIR ?? cwd, "kubeconfig");
  writeFileSync(
    kubeconfig,
    "apiVersion: v1\nkind: Config\nclusters: [{name: none, cluster: {server: 'https://127.0.0.1:9'}}]\n" +
      "users: [{name: none, user: {token: none}}]\ncontexts: [{name: none, context: {cluster: none, user: none}}]\ncurrent-context: none\n",
  );
  const { privateKey } = generateKeyPairSync("rsa", { modulusLength: 2048 });
  const child = spawn(join(env.PATH ?? "", "node"), cmd.slice(1), {
    cwd,
    env: {
      ...env,
      APP_ID: "1",
      PRIVATE_KEY: privateKey.export({ type: "pkcs1", format: "pem" }).toString(),
      WEBHOOK_SECRET: randomBytes(24).toString("hex"),
      HOST: "127.0.0.1",
      PORT: String(port),
      KUBECONFIG: kubeconfig,
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let log = "";
  child.stdout.on("data", (d) => (log += d));
  child.stderr.on("data", (d) => (log += d));
  const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
  let healthy = false;
  for (let i = 0; i < 100 && !healthy && child.exitCode === null; i++) {
    healthy = await fetch(`http://127.0.0.1:${port}/healthz`).then(
      (r) => r.ok,
      () => false,
    );
    if (!healthy) await new Promise((r) => setTimeout(r, 200));
  }
  child.kill("SIGTERM");
  const timer = setTimeout(() => child.kill("SIGKILL"), 15_000);
  const code = await exited;
  clearTimeout(timer);
  if (!healthy) return `/healthz never answered\n${log}`;
  return code === 0 ? undefined : `exit code ${code} after SIGTERM\n${log}`;
}

async function main(): Promise<void> {
  const started = Date.now();
  const dockerfile = readFileSync(join(ROOT, "Dockerfile"), "utf8");
  const stages = parseStages(dockerfile);
  const runtime = stages.at(-1);
  if (!runtime) throw new Error("the Dockerfile has no stage");
  const { copies, env } = runtimeLayout(runtime);
  const work = mkdtempSync(join(tmpdir(), "syncward-image-"));
  const notes: string[] = [];
  try {
    const root = join(work, "root");
    for (const copy of copies) assemble(copy, root, notes);
    const bin = join(root, "usr", "local", "bin");
    mkdirSync(bin, { recursive: true });
    symlinkSync(process.execPath, join(bin, "node"));
    for (const dir of ["tmp", "var/cache/syncward", "home/syncward"])
      mkdirSync(join(root, dir), { recursive: true });
    const tree = join(work, "tree");
    cpSync(join(ROOT, "test/fixtures/helm/web"), join(tree, "web"), { recursive: true });
    cpSync(join(ROOT, "test/fixtures/helm/kustomize-helm"), join(tree, "kustomize-helm"), {
      recursive: true,
    });
    // The image's ENV, its absolute paths moved into the root; PATH: the root's binaries only.
    const imageEnv: Record<string, string> = { HOME: join(root, "home/syncward"), TMPDIR: join(root, "tmp") };
    for (const [k, v] of Object.entries(env)) imageEnv[k] = v.startsWith("/") ? join(root, v) : v;
    imageEnv.PATH = bin;
    let failed = 0;
    for (const [what, problem] of contents(root, dockerfile, copies)) {
      if (problem) failed++;
      process.stdout.write(`${problem ? "FAIL" : "ok  "} ${what}${problem ? `: ${problem}` : ""}\n`);
    }
    if (process.versions.node !== versions().node)
      notes.push(
        `this ran on Node ${process.versions.node}, the image runs ${versions().node} (CI runs this on that one)`,
      );
    for (const check of checks(tree)) {
      const r = spawnSync(join(bin, "node"), check.args, {
        cwd: join(root, "app"),
        env: imageEnv,
        timeout: 60_000,
      });
      const out = r.stdout.toString() + r.stderr.toString();
      const problem = check.expect(out, r.status);
      if (problem) failed++;
      process.stdout.write(
        `${problem ? "FAIL" : "ok  "} ${check.what}${problem ? `: ${problem}\n${out}` : ""}\n`,
      );
    }
    // The image's CMD (exec form), node from the PATH as in the image.
    const cmd = JSON.parse(runtime.instructions.findLast((i) => i.op === "CMD")?.args ?? "[]") as string[];
    if (cmd[0] !== "node")
      throw new Error(`the runtime stage's CMD ${JSON.stringify(cmd)} does not run node`);
    const serverProblem = await checkServer(join(root, "app"), imageEnv, cmd);
    if (serverProblem) failed++;
    process.stdout.write(
      `${serverProblem ? "FAIL" : "ok  "} the app (CMD): /healthz answers, SIGTERM exits 0${serverProblem ? `: ${serverProblem}` : ""}\n`,
    );
    for (const note of new Set(notes)) process.stdout.write(`note: ${note}\n`);
    process.stdout.write(
      `image layout: ${copies.length} COPY instructions assembled, ${failed} failed (${Date.now() - started} ms)\n`,
    );
    process.exitCode = failed ? 1 : 0;
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

if (import.meta.main || process.argv[1] === import.meta.filename) await main();
