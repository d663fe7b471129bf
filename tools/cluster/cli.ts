// `npm run cluster -- up | down | status | env`
import {
  COMPONENTS,
  down,
  isAlive,
  isReady,
  kubeconfigPath,
  PlaneError,
  planeDir,
  readState,
  rssBytes,
  up,
} from "./plane.ts";

const usage = "usage: npm run cluster -- up | down | status | env";

async function main(command: string | undefined): Promise<number> {
  switch (command) {
    case "up": {
      const started = Date.now();
      const { state, alreadyUp } = await up();
      if (alreadyUp) {
        console.log(`control plane already up at ${state.server} (nothing to do)`);
      } else {
        console.log(`control plane up at ${state.server} in ${((Date.now() - started) / 1000).toFixed(1)}s`);
      }
      console.log(`export KUBECONFIG=${state.kubeconfig}`);
      return 0;
    }
    case "down": {
      // The second plane the test runner starts beside it for two-cluster tests goes too.
      const second = await down(`${planeDir()}-2`);
      if (second) console.log("second control plane stopped and its data removed");
      const stopped = await down();
      console.log(stopped ? "control plane stopped and its data removed" : "control plane was not running");
      return 0;
    }
    case "status": {
      const state = readState();
      if (!state) {
        console.log("control plane: down");
        return 1;
      }
      const ready = await isReady(state);
      const rss = rssBytes(state);
      console.log(`control plane: ${ready ? "ready" : "NOT ready"} at ${state.server} (${state.versions})`);
      for (const c of COMPONENTS) {
        const pid = state.pids[c];
        console.log(
          `  ${c.padEnd(24)} pid ${String(pid).padEnd(8)} ${isAlive(pid) ? "running" : "dead"}  ${(rss[c] / 2 ** 20).toFixed(0)} MiB`,
        );
      }
      const total = Object.values(rss).reduce((a, b) => a + b, 0);
      console.log(`  ${"total resident memory".padEnd(24)} ${(total / 2 ** 20).toFixed(0)} MiB`);
      return ready ? 0 : 1;
    }
    case "env":
      console.log(`export KUBECONFIG=${readState()?.kubeconfig ?? kubeconfigPath()}`);
      return 0;
    default:
      console.error(usage);
      return 2;
  }
}

main(process.argv[2]).then(
  (code) => process.exit(code),
  (err: unknown) => {
    if (err instanceof PlaneError) {
      console.error(`syncward cluster: ${err.message}`);
    } else {
      console.error(err);
    }
    process.exit(1);
  },
);
