// A TCP proxy in front of an API server that a test can cut and restore: a network partition
// between syncward and the cluster, while the test itself still reaches the cluster directly.
// TLS passes through untouched (the server's certificate is valid for 127.0.0.1 either way).
import { readFileSync, writeFileSync } from "node:fs";
import { connect, createServer, type Socket } from "node:net";
import { join } from "node:path";

export interface CuttableProxy {
  /** A copy of the kubeconfig whose server is the proxy. */
  kubeconfig: string;
  /** Drops every open connection (watches included) and refuses new ones. */
  cut(): Promise<void>;
  /** Accepts connections again, on the same port (and forwards again after blackhole()). */
  restore(): Promise<void>;
  /**
   * Half-open: connections stay open, old and new, but no byte passes either way (a peer gone
   * without a FIN, traffic black-holed by a firewall). Only liveness checks can tell.
   */
  blackhole(): void;
  close(): Promise<void>;
}

export async function cuttableProxy(kubeconfig: string, server: string, dir: string): Promise<CuttableProxy> {
  const target = new URL(server);
  const open = new Set<Socket>();
  let holed = false;
  const hold = (...sockets: Socket[]) => {
    for (const s of sockets) {
      s.unpipe();
      s.pause();
    }
  };
  const proxy = createServer((downstream) => {
    if (holed) {
      open.add(downstream);
      downstream.on("error", () => downstream.destroy());
      return hold(downstream);
    }
    const upstream = connect(Number(target.port), target.hostname);
    open.add(downstream);
    open.add(upstream);
    const drop = () => {
      downstream.destroy();
      upstream.destroy();
      open.delete(downstream);
      open.delete(upstream);
    };
    for (const s of [downstream, upstream]) {
      s.on("error", drop);
      s.on("close", drop);
    }
    downstream.pipe(upstream);
    upstream.pipe(downstream);
  });
  const listen = (port: number) =>
    new Promise<number>((resolve, reject) => {
      proxy.once("error", reject);
      proxy.listen(port, "127.0.0.1", () => {
        proxy.off("error", reject);
        const address = proxy.address();
        resolve(typeof address === "object" && address ? address.port : port);
      });
    });
  const stop = () =>
    new Promise<void>((resolve) => {
      if (!proxy.listening) return resolve();
      proxy.close(() => resolve());
      for (const s of open) s.destroy();
      open.clear();
    });
  const port = await listen(0);
  const file = join(dir, "proxied-kubeconfig");
  writeFileSync(
    file,
    readFileSync(kubeconfig, "utf8").replace(`server: ${server}`, `server: https://127.0.0.1:${port}`),
  );
  return {
    kubeconfig: file,
    cut: stop,
    restore: async () => {
      if (holed) {
        holed = false;
        for (const s of open) s.destroy();
        open.clear();
      }
      if (!proxy.listening) await listen(port);
    },
    blackhole: () => {
      holed = true;
      hold(...open);
    },
    close: stop,
  };
}
