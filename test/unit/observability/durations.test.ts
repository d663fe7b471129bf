import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { reportDuration, timed } from "../../../src/observability/durations.ts";
import { createMetrics } from "../../../src/observability/metrics.ts";

/** The value of one series in Prometheus text, or undefined when the series is absent. */
function sample(text: string, series: string): number | undefined {
  const line = text.split("\n").find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

const where = { instance: "shop.prod", env: "prod" };
const env = 'app="shop",environment="prod"';

describe("duration histograms", () => {
  it("observes reconcile passes, renders and fetches by environment, webhooks by event", async () => {
    const m = createMetrics({ defaultMetrics: false });
    try {
      reportDuration({ kind: "reconcile", ...where, seconds: 0.02 });
      reportDuration({ kind: "reconcile", ...where, seconds: 45 });
      reportDuration({ kind: "render", ...where, seconds: 0.3 });
      reportDuration({ kind: "fetch", ...where, seconds: 1.5 });
      reportDuration({ kind: "webhook", event: "push", seconds: 0.004 });
      const text = await m.registry.metrics();
      assert.equal(sample(text, `syncward_reconcile_duration_seconds_count{${env}}`), 2);
      assert.equal(sample(text, `syncward_reconcile_duration_seconds_bucket{le="0.025",${env}}`), 1);
      assert.equal(sample(text, `syncward_reconcile_duration_seconds_bucket{le="60",${env}}`), 2);
      assert.equal(sample(text, `syncward_render_duration_seconds_sum{${env}}`), 0.3);
      assert.equal(sample(text, `syncward_source_fetch_duration_seconds_bucket{le="1",${env}}`), 0);
      assert.equal(sample(text, `syncward_source_fetch_duration_seconds_bucket{le="2.5",${env}}`), 1);
      assert.equal(sample(text, 'syncward_webhook_duration_seconds_bucket{le="0.005",event="push"}'), 1);
      for (const name of ["reconcile", "render", "source_fetch", "webhook"])
        assert.match(text, new RegExp(`# TYPE syncward_${name}_duration_seconds histogram`));
    } finally {
      m.close();
    }
  });

  it("times work that fails as well as work that succeeds, and rethrows", async () => {
    const m = createMetrics({ defaultMetrics: false });
    try {
      assert.equal(await timed({ kind: "render", ...where }, async () => 7), 7);
      await assert.rejects(
        timed({ kind: "render", ...where }, async () => {
          throw new Error("bad chart");
        }),
        /bad chart/,
      );
      const text = await m.registry.metrics();
      assert.equal(sample(text, `syncward_render_duration_seconds_count{${env}}`), 2);
    } finally {
      m.close();
    }
  });

  it("stops observing once closed, and never with durations off", async () => {
    const closed = createMetrics({ defaultMetrics: false });
    closed.close();
    const off = createMetrics({ defaultMetrics: false, durations: false });
    reportDuration({ kind: "webhook", event: "push", seconds: 1 });
    for (const m of [closed, off]) {
      const text = await m.registry.metrics();
      assert.equal(sample(text, 'syncward_webhook_duration_seconds_count{event="push"}'), undefined);
    }
  });
});
