import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { DEFAULT_STOP_TIMEOUT_MS, Shutdown, stopTimeoutMs } from "../../../src/observability/shutdown.ts";

function recorder() {
  const lines: string[] = [];
  return {
    lines,
    log: {
      info: (_: object, msg: string) => lines.push(`info ${msg}`),
      error: (_: object, msg: string) => lines.push(`error ${msg}`),
    },
  };
}

describe("Shutdown", () => {
  it("is stopping (readiness fails) before its first step runs, then runs the steps in order", async () => {
    const { log } = recorder();
    const shutdown = new Shutdown({ log, timeoutMs: 5000 });
    const seen: string[] = [];
    shutdown.add("loops", () => seen.push(`loops stopping=${shutdown.stopping}`));
    shutdown.add("client", async () => seen.push("client"));
    shutdown.first("listener", () => seen.push("listener"));
    assert.equal(shutdown.stopping, false);
    assert.equal(await shutdown.stop("SIGTERM"), 0);
    assert.deepEqual(seen, ["listener", "loops stopping=true", "client"]);
  });

  it("runs once however many signals arrive", async () => {
    const { log } = recorder();
    const shutdown = new Shutdown({ log, timeoutMs: 5000 });
    let runs = 0;
    shutdown.add("loops", () => runs++);
    assert.deepEqual(await Promise.all([shutdown.stop("SIGTERM"), shutdown.stop("SIGINT")]), [0, 0]);
    assert.equal(runs, 1);
  });

  it("gives up at its bound, naming the step it was at, and exits 1", async () => {
    const { log, lines } = recorder();
    const shutdown = new Shutdown({ log, timeoutMs: 20 });
    shutdown.add("stopping the reconcile loops", () => new Promise(() => undefined));
    assert.equal(await shutdown.stop("SIGTERM"), 1);
    assert.match(
      lines.at(-1) ?? "",
      /^error .*SYNCWARD_STOP_TIMEOUT \(20ms\) at "stopping the reconcile loops"/,
    );
  });

  it("exits 1 when a step fails, naming it", async () => {
    const { log, lines } = recorder();
    const shutdown = new Shutdown({ log, timeoutMs: 5000 });
    shutdown.add("closing the cluster connection", () => Promise.reject(new Error("boom")));
    assert.equal(await shutdown.stop("SIGTERM"), 1);
    assert.match(lines.at(-1) ?? "", /stopping failed at "closing the cluster connection"/);
  });
});

describe("stopTimeoutMs", () => {
  const cases: Array<[string | undefined, number | RegExp]> = [
    [undefined, DEFAULT_STOP_TIMEOUT_MS],
    ["", DEFAULT_STOP_TIMEOUT_MS],
    ["40s", 40_000],
    ["1m", 60_000],
    ["500ms", /at least 1s/],
    ["soon", /SYNCWARD_STOP_TIMEOUT: "soon" is not a duration.*terminationGracePeriodSeconds/],
  ];
  for (const [text, want] of cases)
    it(`${JSON.stringify(text)} -> ${want}`, () => {
      const env = text === undefined ? {} : { SYNCWARD_STOP_TIMEOUT: text };
      if (typeof want === "number") assert.equal(stopTimeoutMs(env), want);
      else assert.throws(() => stopTimeoutMs(env), want);
    });
});
