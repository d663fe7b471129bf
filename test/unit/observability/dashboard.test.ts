// The Grafana dashboard with two or more replicas: every replica exports every environment's
// status, so a panel over a per-environment series shows each environment once only if it
// aggregates the replicas away (max by (app, environment) for gauges, sum for counters).
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, it } from "node:test";
import { createMetrics } from "../../../src/observability/metrics.ts";

const DASHBOARD = join(import.meta.dirname, "..", "..", "..", "deploy", "grafana", "syncward.json");

/** The syncward series that carry `app` and `environment`, with their histogram parts. */
function perEnvironmentSeries(): Set<string> {
  const m = createMetrics({ defaultMetrics: false });
  m.close();
  const names = new Set<string>();
  for (const metric of m.registry.getMetricsAsArray()) {
    const labels = (metric as unknown as { labelNames: string[] }).labelNames;
    if (!labels.includes("app") || !labels.includes("environment")) continue;
    const { name } = metric;
    for (const suffix of ["", "_bucket", "_sum", "_count"]) names.add(`${name}${suffix}`);
  }
  return names;
}

/** Whether `expr` aggregates with `by` over a list holding both app and environment. */
function aggregatesPerEnvironment(expr: string): boolean {
  return [...expr.matchAll(/\b(?:sum|max|min|avg) by \(([^)]*)\)/g)].some((m) => {
    const by = (m[1] ?? "").split(",").map((l) => l.trim());
    return by.includes("app") && by.includes("environment");
  });
}

describe("the Grafana dashboard", () => {
  it("shows each environment once whatever the number of replicas", () => {
    const series = perEnvironmentSeries();
    assert.ok(series.has("syncward_app_info") && series.has("syncward_reconcile_duration_seconds_bucket"));
    const dashboard = JSON.parse(readFileSync(DASHBOARD, "utf8")) as {
      panels: Array<{ title: string; targets: Array<{ expr: string }> }>;
    };
    let checked = 0;
    for (const panel of dashboard.panels)
      for (const { expr } of panel.targets) {
        const used = [...expr.matchAll(/\bsyncward_[a-z_]+/g)].map((m) => m[0]);
        if (!used.some((name) => series.has(name))) continue;
        checked++;
        assert.ok(aggregatesPerEnvironment(expr), `${panel.title}: ${expr} aggregates by (app, environment)`);
      }
    assert.ok(checked >= 8, `${checked} per-environment queries`);
  });

  it("tells an aggregated query from one that keeps each replica's series", () => {
    assert.equal(aggregatesPerEnvironment("max by (app, environment) (syncward_app_info)"), true);
    assert.equal(aggregatesPerEnvironment("time() - syncward_last_sync_timestamp_seconds"), false);
    assert.equal(aggregatesPerEnvironment("sum by (app) (syncward_syncs_total)"), false);
  });
});
