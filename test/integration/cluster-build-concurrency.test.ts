// Two builds at once (two terminals, `npm test` beside `npm run demo` on a fresh machine) must both
// succeed and build each binary once. `go` is replaced by a stand-in that takes a second per binary,
// so the race window is wide open and the test costs seconds, not a real build.
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, it } from "node:test";

const BUILD = "tools/cluster/build.sh";

function fakeGo(dir: string): string {
  const bin = join(dir, "bin");
  mkdirSync(join(dir, "mod", "kustomize", "stage", "node", "fast"), { recursive: true });
  for (const stage of [
    "node/fast/node-initialize.yaml",
    "node/heartbeat-with-lease/node-heartbeat-with-lease.yaml",
    "pod/fast/pod-ready.yaml",
    "pod/fast/pod-complete.yaml",
    "pod/fast/pod-delete.yaml",
  ]) {
    const file = join(dir, "mod", "kustomize", "stage", stage);
    mkdirSync(join(file, ".."), { recursive: true });
    writeFileSync(file, `kind: Stage\nmetadata: {name: ${stage}}\n`);
  }
  writeFileSync(
    join(dir, "go.mod"),
    "module fake\n\ngo 1.26\n\nrequire k8s.io/client-go v0.37.0\n\nreplace (\n\tk8s.io/api => ./staging/src/k8s.io/api\n)\n",
  );
  mkdirSync(bin);
  writeFileSync(
    join(bin, "go"),
    `#!/bin/bash
case "$1" in
  version) echo "go version go1.26.8 linux/amd64" ;;
  env) case "$2" in GOVERSION) echo go1.26.8 ;; *) echo off ;; esac ;;
  mod) if [ "$3" = -json ]; then printf '{\\n\\t"GoMod": "%s",\\n\\t"Dir": "%s"\\n}\\n' "${dir}/go.mod" "${dir}/mod"; fi ;;
  build)
    while [ "$1" != -o ]; do shift; done
    echo "$2" >>"${dir}/builds.log"
    sleep 1
    printf '#!/bin/sh\\n' >"$2" && chmod +x "$2" ;;
esac
`,
  );
  chmodSync(join(bin, "go"), 0o755);
  return bin;
}

function build(
  env: NodeJS.ProcessEnv,
  components: string[],
): Promise<{ code: number | null; stderr: string; stdout: string }> {
  return new Promise((resolve) => {
    const child = spawn("bash", [BUILD, ...components], { env, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d) => (stdout += d));
    child.stderr.on("data", (d) => (stderr += d));
    child.on("close", (code) => resolve({ code, stdout, stderr }));
  });
}

describe("tools/cluster/build.sh run twice at once", () => {
  it("both succeed, every component is built once, and the second reports the first one's binaries", async () => {
    const dir = mkdtempSync(join(tmpdir(), "syncward-build-race-"));
    const cache = join(dir, "cache");
    const env = { ...process.env, PATH: `${fakeGo(dir)}:${process.env.PATH}`, SYNCWARD_CLUSTER_CACHE: cache };
    const all = ["etcd", "kubernetes", "kwok", "helm"];
    const [a, b] = await Promise.all([build(env, all), build(env, all)]);
    assert.equal(a.code, 0, a.stderr);
    assert.equal(b.code, 0, b.stderr);
    const built = readFileSync(join(dir, "builds.log"), "utf8").trim().split("\n");
    const names = built.map((p) => p.replace(/.*\/bin\//, "").replace(/\.tmp\.\d+$/, "")).sort();
    assert.deepEqual(names, [
      "etcd",
      "helm",
      "kube-apiserver",
      "kube-controller-manager",
      "kube-scheduler",
      "kwok",
    ]);
    assert.match(a.stderr + b.stderr, /another build holds the lock; waiting for it/);
    for (const out of [a.stdout, b.stdout]) {
      for (const line of out
        .trim()
        .split("\n")
        .filter((l) => !/^(versions|registry)=/.test(l))) {
        const path = line.slice(line.indexOf("=") + 1);
        assert.ok(existsSync(path), `${line} exists`);
      }
    }
    assert.match(
      readFileSync(join(cache, "kwok-v0.8.0", "stages.yaml"), "utf8"),
      /pod\/fast\/pod-delete\.yaml/,
    );
  });
});
