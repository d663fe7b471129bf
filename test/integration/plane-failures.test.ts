// The control plane tooling fails clearly: one paragraph naming the cause and the fix, a
// non-zero exit code, and no process left behind.
import assert from "node:assert/strict";
import { execFileSync, spawn, spawnSync } from "node:child_process";
import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, it } from "node:test";

const BUILD = "tools/cluster/build.sh";

function cli(env: Record<string, string>) {
  return spawnSync(process.execPath, ["--import", "tsx", "tools/cluster/cli.ts", "up"], {
    env: { ...process.env, ...env },
    encoding: "utf8",
  });
}

/** A cache of fake binaries: etcd serves /health, kube-apiserver dies at once as if its port were taken. */
function fakeCache(): string {
  const cache = mkdtempSync(join(tmpdir(), "syncward-fake-cache-"));
  const versions = { etcd: "v3.7.3", kubernetes: "v1.37.2", kwok: "v0.8.0" };
  const write = (dir: string, name: string, body: string) => {
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, name), body);
    chmodSync(join(dir, name), 0o755);
  };
  write(
    join(cache, `etcd-${versions.etcd}`, "bin"),
    "etcd",
    `#!${process.execPath}
const url = new URL(process.argv.find((a) => a.startsWith("--listen-client-urls=")).split("=")[1]);
require("node:http").createServer((_, res) => res.end("ok")).listen(Number(url.port), "127.0.0.1");
`,
  );
  const kube = join(cache, `kubernetes-${versions.kubernetes}`, "bin");
  write(
    kube,
    "kube-apiserver",
    '#!/bin/sh\necho "E1129 failed to listen on 127.0.0.1:6443: listen tcp 127.0.0.1:6443: bind: address already in use" >&2\nexit 1\n',
  );
  write(kube, "kube-controller-manager", "#!/bin/sh\nsleep 600\n");
  write(kube, "kube-scheduler", "#!/bin/sh\nsleep 600\n");
  write(join(cache, `kwok-${versions.kwok}`, "bin"), "kwok", "#!/bin/sh\nsleep 600\n");
  writeFileSync(join(cache, `kwok-${versions.kwok}`, "stages.yaml"), "kind: Stage\n");
  return cache;
}

/** The command lines of running processes that contain `pattern` (what `pgrep -f` finds). */
function running(pattern: string): string[] {
  if (existsSync("/proc/self/cmdline")) {
    return readdirSync("/proc")
      .filter((pid) => /^\d+$/.test(pid))
      .flatMap((pid) => {
        try {
          return [readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0").join(" ").trim()];
        } catch {
          return []; // exited meanwhile
        }
      })
      .filter((cmd) => cmd.includes(pattern));
  }
  // No /proc (macOS): ps, which every such system has.
  const ps = spawnSync("ps", ["-axo", "args="], { encoding: "utf8" });
  if (ps.error)
    throw new Error(`listing processes needs /proc or ps, and this machine has neither: ${ps.error.message}`);
  return ps.stdout.split("\n").filter((cmd) => cmd.includes(pattern));
}

describe("control plane failures", () => {
  it("sees a running process by its command line, without pgrep (the check below relies on it)", () => {
    const marker = `syncward-running-${process.pid}-${Date.now()}`;
    const child = spawn(process.execPath, ["-e", "setTimeout(() => {}, 60_000)", marker], {
      stdio: "ignore",
    });
    try {
      assert.equal(running(marker).length, 1);
    } finally {
      child.kill("SIGKILL");
    }
  });

  it("names the cause and the fix when Go is missing", () => {
    const r = spawnSync("bash", [BUILD], {
      env: { ...process.env, PATH: "/usr/bin:/bin" },
      encoding: "utf8",
    });
    assert.notEqual(r.status, 0);
    assert.match(
      r.stderr,
      /Go is not installed or not on PATH\. .* install Go >= 1\.26 .* SYNCWARD_TEST_KUBECONFIG/s,
    );
  });

  it("names the module and version when the proxy does not serve it", () => {
    const cache = mkdtempSync(join(tmpdir(), "syncward-cache-"));
    const r = spawnSync("bash", [BUILD, "kubernetes"], {
      env: { ...process.env, SYNCWARD_CLUSTER_CACHE: cache, KUBERNETES_VERSION: "v1.99.77" },
      encoding: "utf8",
    });
    assert.notEqual(r.status, 0);
    assert.match(r.stderr, /kubernetes v1\.99\.77: could not resolve its modules from the Go module proxy/);
  });

  it("stops everything it started when a component exits at start, and says a port is in use", () => {
    const cache = fakeCache();
    const dir = mkdtempSync(join(tmpdir(), "syncward-plane-"));
    const r = cli({ SYNCWARD_CLUSTER_CACHE: cache, SYNCWARD_CLUSTER_DIR: join(dir, "plane") });
    assert.equal(r.status, 1);
    assert.match(
      r.stderr,
      /syncward cluster: kube-apiserver exited with code 1 right after start\. A port it needs is already in use by another process\./,
    );
    assert.match(r.stderr, /address already in use/);
    assert.match(r.stderr, /Everything this run started has been stopped/);
    assert.deepEqual(running(join(cache, "etcd")), [], "the etcd it started is gone");
    assert.equal(existsSync(join(dir, "plane")), false, "its data is removed");
  });

  it("reuses cached binaries instead of rebuilding", () => {
    const cache = fakeCache();
    const out = execFileSync("bash", [BUILD], {
      env: { ...process.env, SYNCWARD_CLUSTER_CACHE: cache },
      encoding: "utf8",
      stdio: ["ignore", "pipe", "pipe"],
    });
    assert.match(out, new RegExp(`^etcd=${cache}/etcd-v3\\.7\\.3/bin/etcd$`, "m"));
  });
});
