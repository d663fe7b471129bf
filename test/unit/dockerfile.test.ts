// The image cannot be built on the machines here (no container engine); what can be checked
// without one: every download of the build is pinned and verified (below), the runtime stage's
// files run (tools/image-layout.ts, a CI step), and every file the Dockerfile copies from the build context is in it, that is,
// not excluded by .dockerignore (as Docker reads it: the last matching pattern wins, and a pattern
// matching a parent directory matches the files under it).
import assert from "node:assert/strict";
import { execFileSync, spawnSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, it } from "node:test";
import {
  dockerfileNodeVersion,
  goModules,
  parseStages,
  productionPackages,
  runtimeLayout,
  type Stage,
} from "../../tools/image-layout.ts";
import { ROOT } from "../support/built.ts";

function patternRegex(pattern: string): RegExp {
  let re = "";
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i] as string;
    if (c === "*" && pattern[i + 1] === "*") {
      // "**/" is any number of directories, none included; a trailing "**" anything below.
      i++;
      if (pattern[i + 1] === "/") {
        re += "(?:.*/)?";
        i++;
      } else re += ".*";
    } else if (c === "*") re += "[^/]*";
    else if (c === "?") re += "[^/]";
    else re += c.replace(/[.+^${}()|[\]\\]/g, "\\$&");
  }
  return new RegExp(`^${re}$`);
}

/** Whether Docker leaves `path` (relative to the context) out of the build context. */
function ignored(rules: string[], path: string): boolean {
  const parents = path.split("/").map((_, i, parts) => parts.slice(0, i + 1).join("/"));
  let out = false;
  for (const rule of rules) {
    const negated = rule.startsWith("!");
    const re = patternRegex((negated ? rule.slice(1) : rule).replace(/^\/+|\/+$/g, ""));
    if (parents.some((p) => re.test(p))) out = !negated;
  }
  return out;
}

const rules = readFileSync(join(ROOT, ".dockerignore"), "utf8")
  .split("\n")
  .map((l) => l.trim())
  .filter((l) => l && !l.startsWith("#"));

/** Sources of the COPY instructions that read the build context (not another stage). */
function contextSources(dockerfile: string): string[] {
  return dockerfile
    .replace(/\\\n/g, " ")
    .split("\n")
    .filter((l) => /^COPY\s/i.test(l.trim()) && !/--from=/.test(l))
    .flatMap((l) =>
      l
        .trim()
        .split(/\s+/)
        .slice(1)
        .filter((w) => !w.startsWith("--"))
        .slice(0, -1),
    );
}

describe("Dockerfile build context", () => {
  it("reads .dockerignore as Docker does", () => {
    const table: Array<[string, boolean]> = [
      ["src/kube/client.ts", false],
      ["tools/build.mjs", false],
      ["tools/cluster/cli.ts", true],
      ["test/unit/x.test.ts", true],
      ["src/certs/key.pem", true],
      ["node_modules/yaml/index.js", true],
      ["tools/cluster/versions.env", false],
      ["src/.env", true],
    ];
    for (const [path, expected] of table) assert.equal(ignored(rules, path), expected, path);
  });

  it("has every file the Dockerfile copies from the context", () => {
    const sources = contextSources(readFileSync(join(ROOT, "Dockerfile"), "utf8"));
    assert.ok(sources.includes("tsconfig.build.json") && sources.includes("src"), `found ${sources}`);
    for (const source of sources) {
      const path = source.replace(/^\.\/|\/$/g, "");
      assert.ok(existsSync(join(ROOT, path)), `${path} exists`);
      assert.equal(ignored(rules, path), false, `${path} is left out of the build context by .dockerignore`);
    }
  });
});

const dockerfile = readFileSync(join(ROOT, "Dockerfile"), "utf8");
const stages = parseStages(dockerfile);
const versionsEnv = readFileSync(join(ROOT, "tools/cluster/versions.env"), "utf8");

function stage(name: string): Stage {
  const found = stages.find((s) => s.name === name);
  assert.ok(found, `stage ${name}`);
  return found;
}
const runs = (s: Stage) => s.instructions.filter((i) => i.op === "RUN").map((i) => i.args);

describe("Dockerfile downloads", () => {
  it("reads the stages, the runtime's copies and ENV as Docker does", () => {
    const parsed = parseStages(
      'FROM a:1 AS one\n# c\nRUN x \\\n  y\nFROM b:2\nWORKDIR /app\nENV A=1 \\\n  B="-x y"\nCOPY --from=one /o ./bin/\nCOPY p q ./\n',
    );
    assert.deepEqual(parsed[0], { name: "one", instructions: [{ op: "RUN", args: "x y" }] });
    assert.deepEqual(runtimeLayout(parsed[1]!), {
      copies: [
        { from: "one", sources: ["/o"], dest: "/app/bin/" },
        { sources: ["p", "q"], dest: "/app/" },
      ],
      env: { A: "1", B: "-x y" },
    });
  });

  it("bases every stage on an image pinned to an exact version", () => {
    const images = [...dockerfile.matchAll(/^ARG (\w+_IMAGE)=(\S+)$/gm)].map((m) => m[2]);
    assert.ok(images.length >= 2, `found ${images}`);
    for (const image of images) assert.match(image ?? "", /:\d+\.\d+\.\d+(-[a-z]+)*$/, `${image} is pinned`);
    for (const from of dockerfile.matchAll(/^FROM (.*)$/gm))
      assert.match(from[1] ?? "", /\$\{\w+_IMAGE\} AS \w+$/);
  });

  it("downloads nothing by URL without a checksum from tools/cluster/versions.env", () => {
    for (const s of stages) {
      assert.ok(
        !s.instructions.some((i) => i.op === "ADD"),
        `stage ${s.name} has no ADD (no unverified URL or archive)`,
      );
      for (const run of runs(s)) {
        if (
          !/\b(curl|wget)\b|fetch\(|https?:\/\//.test(run.replace(/GOPROXY=https:\/\/proxy\.golang\.org/, ""))
        )
          continue;
        assert.match(run, /sha256sum -c/, `stage ${s.name} verifies what it downloads: ${run}`);
        assert.match(run, /versions\.env/, `stage ${s.name} takes the checksum from versions.env`);
      }
    }
  });

  it("builds helm and kubectl at the pinned versions, checking their module sums and go.sum against the checksum database", () => {
    const tools = stage("tools");
    const env = tools.instructions
      .filter((i) => i.op === "ENV")
      .map((i) => i.args)
      .join(" ");
    assert.match(env, /GOSUMDB=sum\.golang\.org/);
    assert.match(env, /GOFLAGS=-mod=mod(\s|$)/);
    for (const off of ["GONOSUMDB", "GONOSUMCHECK", "GOPRIVATE", "GOINSECURE"])
      assert.doesNotMatch(env, new RegExp(`${off}=\\S`));
    const instructions = stages.flatMap((s) => s.instructions.map((i) => i.args)).join("\n");
    assert.doesNotMatch(instructions, /-insecure|GOSUMDB=off/);
    const [build] = runs(tools);
    assert.ok(build);
    assert.match(build, /\. tools\/cluster\/versions\.env/);
    assert.match(
      build,
      /test "\$\(sum_of "helm\.sh\/helm\/v3@\$\{HELM_VERSION\}"\)" = "\$\{HELM_MODULE_SUM\}"/,
    );
    assert.match(
      build,
      /test "\$\(sum_of "k8s\.io\/kubernetes@\$\{KUBERNETES_VERSION\}"\)" = "\$\{KUBERNETES_MODULE_SUM\}"/,
    );
    assert.match(build, /bash tools\/cluster\/build\.sh helm kubectl/);
    // The license and NOTICE files of what was compiled in, for the runtime to carry.
    assert.match(build, /bash tools\/cluster\/licenses\.sh \/tools\/licenses \/tools\/helm \/tools\/kubectl/);
    // The build's `set -e` stops at a sum that differs, before anything is built.
    assert.ok(
      build.indexOf("set -eux") < build.indexOf("HELM_MODULE_SUM") &&
        build.indexOf("MODULE_SUM") < build.indexOf("build.sh"),
    );
    for (const name of ["HELM_MODULE_SUM", "KUBERNETES_MODULE_SUM"])
      assert.match(
        versionsEnv,
        new RegExp(`^${name}=h1:[A-Za-z0-9+/]{43}=$`, "m"),
        `${name} in versions.env`,
      );
    // The versions are versions.env's: none is written in the Dockerfile.
    for (const name of ["HELM_VERSION", "KUBERNETES_VERSION"]) {
      const version = new RegExp(`^${name}=\\$\\{${name}:-(v[\\d.]+)\\}$`, "m").exec(versionsEnv)?.[1];
      assert.ok(version, name);
      assert.ok(!dockerfile.includes(version), `the Dockerfile does not repeat ${name}`);
    }
  });

  it("records the sums of the very modules tools/cluster/build.sh builds helm and kubectl from", (t) => {
    // The Go module cache holds them once build.sh has run (CI's control-plane step); GOPROXY=off
    // reads only that cache, whose files go verified against the checksum database when it fetched them.
    const env = { ...process.env, GOPROXY: "off", GOFLAGS: "-mod=mod" };
    const read = (name: string) =>
      execFileSync("bash", ["-c", `source tools/cluster/versions.env; echo "$${name}"`], { cwd: ROOT })
        .toString()
        .trim();
    for (const [module, version, sum] of [
      ["helm.sh/helm/v3", "HELM_VERSION", "HELM_MODULE_SUM"],
      ["k8s.io/kubernetes", "KUBERNETES_VERSION", "KUBERNETES_MODULE_SUM"],
    ] as const) {
      const got = spawnSync("go", ["mod", "download", "-json", `${module}@${read(version)}`], {
        cwd: tmpdir(),
        env,
      });
      if (got.error || got.status !== 0) {
        t.diagnostic(`${module} is not in the Go module cache (run tools/cluster/build.sh); not compared`);
        continue;
      }
      assert.equal(JSON.parse(got.stdout.toString()).Sum, read(sum), `${sum} is the sum of ${module}`);
    }
  });

  it("installs npm packages from the lockfile and the built helm and kubectl into the runtime", () => {
    for (const s of stages)
      for (const run of runs(s)) assert.doesNotMatch(run, /npm (install|i) /, `stage ${s.name}`);
    assert.ok(runs(stage("deps")).some((r) => /npm ci --omit=dev/.test(r)));
    // npm ci checks each tarball against the lockfile's hash: every package has one.
    const lock = JSON.parse(readFileSync(join(ROOT, "package-lock.json"), "utf8")) as {
      packages: Record<string, { integrity?: string; link?: boolean }>;
    };
    for (const [path, meta] of Object.entries(lock.packages))
      if (path && !meta.link) assert.match(meta.integrity ?? "", /^sha512-/, `${path} has an integrity hash`);
    const { copies, env } = runtimeLayout(stages.at(-1)!);
    assert.deepEqual(
      copies.filter((c) => c.from === "tools"),
      [
        { from: "tools", sources: ["/tools/helm"], dest: "/usr/local/bin/helm" },
        { from: "tools", sources: ["/tools/kubectl"], dest: "/usr/local/bin/kubectl" },
        { from: "tools", sources: ["/tools/licenses"], dest: "/usr/local/share/doc/helm-kubectl" },
      ],
    );
    assert.equal(env.SYNCWARD_HELM, "/usr/local/bin/helm");
  });

  it("runs the Node of versions.env's IMAGE_NODE_VERSION and carries syncward's LICENSE", () => {
    const node = /^IMAGE_NODE_VERSION=(\d+\.\d+\.\d+)$/m.exec(versionsEnv)?.[1];
    assert.ok(node, "IMAGE_NODE_VERSION in versions.env, not overridable");
    assert.equal(dockerfileNodeVersion(dockerfile), node, "the Dockerfile's NODE_IMAGE default");
    assert.equal(dockerfileNodeVersion("ARG NODE_IMAGE=node:24.20.1-bookworm-slim\n"), "24.20.1");
    assert.match(readFileSync(join(ROOT, ".ci", "run"), "utf8"), /node@\$IMAGE_NODE_VERSION/);
    const { copies } = runtimeLayout(stages.at(-1)!);
    assert.ok(
      copies.some((c) => !c.from && c.sources.includes("LICENSE") && c.dest === "/app/"),
      "LICENSE copied into /app",
    );
  });

  it("reads the modules compiled into a Go binary, a replacement in the stead of what it replaces", () => {
    const out = [
      "/out/kubectl: go1.26.8",
      "\tpath\tk8s.io/kubernetes/cmd/kubectl",
      "\tmod\tk8s.io/kubernetes\tv1.37.2\th1:A=",
      "\tdep\tgithub.com/spf13/cobra\tv1.10.1\th1:B=",
      "\tdep\tk8s.io/api\tv0.0.0",
      "\t=>\tk8s.io/api\tv0.37.2\th1:C=",
      "\tdep\texample.com/local\tv0.0.0",
      "\t=>\t../local\t",
      "\tbuild\tCGO_ENABLED=0",
    ].join("\n");
    assert.deepEqual(goModules(out), [
      "k8s.io/kubernetes@v1.37.2",
      "github.com/spf13/cobra@v1.10.1",
      "k8s.io/api@v0.37.2",
    ]);
  });

  it("takes the runtime's node_modules as npm ci --omit=dev installs them", () => {
    const lock = {
      packages: {
        "": {},
        "node_modules/yaml": {},
        "node_modules/tsx": { dev: true },
        "node_modules/a/node_modules/b": {},
        "node_modules/local": { link: true },
      },
    };
    assert.deepEqual(productionPackages(lock), ["node_modules/yaml", "node_modules/a/node_modules/b"]);
  });
});
