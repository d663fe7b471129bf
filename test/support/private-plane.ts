// A control plane of the test file's own (etcd and kube-apiserver in a temporary directory, on
// ports of its own) for fault tests that stop and start components. The shared plane is never
// touched: it serves every other test file. One per file, reused by the file's tests.
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before } from "node:test";
import { KubeClient } from "../../src/kube/client.ts";
import {
  type Component,
  down,
  PlaneError,
  readState,
  startComponent,
  stopComponent,
  up,
} from "../../tools/cluster/plane.ts";
import { grantStateRole } from "./cluster.ts";
import { provisionAccount } from "./syncward-account.ts";

export interface PrivatePlane {
  readonly dir: string;
  readonly kubeconfig: string;
  readonly server: string;
  /** An admin client; it keeps working across restarts (requests fail while a component is down). */
  readonly client: KubeClient;
  readonly etcdUrl: string;
  /** Kills a component (SIGKILL by default, sent before the first await) and waits until it is gone. */
  stop(name: Component, signal?: NodeJS.Signals): Promise<void>;
  /** Starts it again as it was first started, and waits until it is ready. */
  start(name: Component): Promise<void>;
  /** A fresh namespace (the whole plane is thrown away after the file). */
  namespace(prefix?: string): Promise<string>;
  /** deploy/'s ServiceAccount on this plane, as syncward runs (made on first use). */
  readonly syncwardKubeconfig: string;
  /** A fresh namespace where that account may keep syncward's state (deploy/'s state Role). */
  stateNamespace(prefix?: string): Promise<string>;
}

/** `full`: the controller manager, scheduler and kwok too (Jobs run, pods finish), not just the API. */
export function usePrivatePlane(options: { full?: boolean } = {}): PrivatePlane {
  const parent = mkdtempSync(join(tmpdir(), "syncward-private-plane-"));
  const dir = join(parent, "plane");
  let state: { kubeconfig: string; server: string; etcdUrl: string; client: KubeClient } | undefined;
  let account: { kubeconfig: string; client: KubeClient } | undefined;
  const useAccount = () => {
    if (!account) {
      const kubeconfig = provisionAccount(ready().kubeconfig, join(parent, "syncward-sa.kubeconfig"));
      account = { kubeconfig, client: KubeClient.fromKubeconfig({ kubeconfig }) };
    }
    return account;
  };
  const ready = () => {
    if (!state) throw new Error("the private control plane is not up (used outside a test?)");
    return state;
  };
  before(async () => {
    try {
      const { state: s } = await up({ dir, apiOnly: !options.full });
      state = {
        kubeconfig: s.kubeconfig,
        server: s.server,
        etcdUrl: `http://127.0.0.1:${s.ports.etcdClient}`,
        client: KubeClient.fromKubeconfig({ kubeconfig: s.kubeconfig }),
      };
    } catch (err) {
      throw new Error(
        `fault tests need a private control plane (etcd and kube-apiserver binaries, built by tools/cluster/build.sh), and it could not start in ${dir}: ${
          err instanceof PlaneError || err instanceof Error ? err.message : String(err)
        }`,
      );
    }
  });
  // Its processes are detached: if this test process dies without running `after`, kill them.
  const killLeftovers = () => {
    for (const pid of Object.values(readState(dir)?.pids ?? {}))
      if (pid > 0)
        try {
          process.kill(pid, "SIGKILL");
        } catch {
          // already gone
        }
  };
  // A runner that times the file out sends SIGTERM, which skips `exit` handlers: kill them first.
  const onSignal = (signal: NodeJS.Signals) => {
    killLeftovers();
    process.kill(process.pid, signal);
  };
  process.once("exit", killLeftovers);
  process.once("SIGTERM", onSignal);
  process.once("SIGINT", onSignal);
  after(async () => {
    state?.client.close();
    account?.client.close();
    await down(dir);
    rmSync(parent, { recursive: true, force: true });
    process.off("exit", killLeftovers);
    process.off("SIGTERM", onSignal);
    process.off("SIGINT", onSignal);
  });
  async function namespace(prefix = "t"): Promise<string> {
    const name = `${prefix}-${randomBytes(3).toString("hex")}`;
    await ready().client.create({ apiVersion: "v1", kind: "Namespace", metadata: { name } });
    return name;
  }
  return {
    dir,
    get kubeconfig() {
      return ready().kubeconfig;
    },
    get server() {
      return ready().server;
    },
    get client() {
      return ready().client;
    },
    get etcdUrl() {
      return ready().etcdUrl;
    },
    stop: (name, signal) => stopComponent(name, dir, signal),
    start: (name) => startComponent(name, dir),
    namespace,
    get syncwardKubeconfig() {
      return useAccount().kubeconfig;
    },
    async stateNamespace(prefix = "state") {
      const name = await namespace(prefix);
      await grantStateRole(ready().client, useAccount().client, name);
      return name;
    },
  };
}
