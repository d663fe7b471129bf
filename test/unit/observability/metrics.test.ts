import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { SyncOutcome } from "../../../src/engine/sync.ts";
import { Reachability } from "../../../src/kube/reachability.ts";
import { createMetrics } from "../../../src/observability/metrics.ts";
import type { ReconcilerEvent } from "../../../src/reconciler/events.ts";
import type { HistoryEntry } from "../../../src/state/types.ts";

const REV = "0123456789abcdef0123456789abcdef01234567";

function outcome(phase: SyncOutcome["phase"], seconds: number): SyncOutcome {
  const startedAt = "2026-01-01T00:00:00.000Z";
  return {
    revision: REV,
    phase,
    message: "",
    resources: [],
    startedAt,
    finishedAt: new Date(Date.parse(startedAt) + seconds * 1000).toISOString(),
    totals: { created: 0, configured: 0, unchanged: 0, pruned: 0, failed: 0, skipped: 0 },
    writes: 0,
    dryRun: false,
    inventory: [],
    retryable: false,
  };
}

const entry = {} as HistoryEntry;
const base = { instance: "shop.prod", env: "prod", revision: REV };

/** The value of one series in Prometheus text, or undefined when the series is absent. */
function sample(text: string, series: string): number | undefined {
  const line = text.split("\n").find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

describe("createMetrics", () => {
  it("counts syncs by environment, trigger and result, and observes their duration", async () => {
    const m = createMetrics({ defaultMetrics: false });
    const events: ReconcilerEvent[] = [
      { ...base, type: "synced", trigger: "push", actor: "alice", outcome: outcome("Succeeded", 3), entry },
      { ...base, type: "synced", trigger: "push", actor: "alice", outcome: outcome("Succeeded", 40), entry },
      { ...base, type: "synced", trigger: "comment", actor: "bob", outcome: outcome("Failed", 1), entry },
      {
        ...base,
        instance: "shop.dev",
        env: "dev",
        type: "synced",
        trigger: "poll",
        actor: "x",
        outcome: outcome("Refused", 0),
        entry,
      },
    ];
    for (const e of events) m.recordEvent(e);
    const text = await m.registry.metrics();
    assert.equal(
      sample(text, 'syncward_syncs_total{app="shop",environment="prod",trigger="push",result="Succeeded"}'),
      2,
    );
    assert.equal(
      sample(text, 'syncward_syncs_total{app="shop",environment="prod",trigger="comment",result="Failed"}'),
      1,
    );
    assert.equal(
      sample(text, 'syncward_syncs_total{app="shop",environment="dev",trigger="poll",result="Refused"}'),
      1,
    );
    assert.equal(sample(text, 'syncward_sync_duration_seconds_count{app="shop",environment="prod"}'), 3);
    assert.equal(sample(text, 'syncward_sync_duration_seconds_sum{app="shop",environment="prod"}'), 44);
    assert.equal(
      sample(text, 'syncward_sync_duration_seconds_bucket{le="5",app="shop",environment="prod"}'),
      2,
    );
    assert.equal(
      sample(text, 'syncward_sync_duration_seconds_bucket{le="30",app="shop",environment="prod"}'),
      2,
    );
    assert.equal(
      sample(text, 'syncward_sync_duration_seconds_bucket{le="60",app="shop",environment="prod"}'),
      3,
    );
    assert.match(text, /# TYPE syncward_sync_duration_seconds histogram/);
  });

  it("counts automatic rollbacks by result", async () => {
    const m = createMetrics({ defaultMetrics: false });
    m.recordEvent({ ...base, type: "autoRollback", to: "a".repeat(40), outcome: outcome("Succeeded", 1) });
    m.recordEvent({ ...base, type: "autoRollback", refused: "a CRD changed" });
    m.recordEvent({ ...base, type: "autoRollback", refused: "no earlier release was Healthy" });
    const text = await m.registry.metrics();
    const at = (result: string) =>
      sample(text, `syncward_auto_rollbacks_total{app="shop",environment="prod",result="${result}"}`);
    assert.equal(at("rolledBack"), 1);
    assert.equal(at("refused"), 2);
  });

  it("counts self-heals as syncs, as drift and as self-heals; drift fights apart", async () => {
    const m = createMetrics({ defaultMetrics: false });
    m.recordEvent({
      ...base,
      type: "selfHealed",
      drifted: ["a /spec/replicas"],
      outcome: outcome("Succeeded", 1),
      entry,
    });
    m.recordEvent({
      ...base,
      type: "driftFight",
      fight: {
        object: "deployment.apps/web in shop",
        key: "apps/Deployment:shop/web",
        fields: ["/spec/replicas"],
        managers: ["hpa"],
        heals: 5,
        windowMinutes: 10,
        backoffMs: 18_000,
        ignoreSnippet: "",
      },
    });
    m.recordEvent({
      ...base,
      type: "outOfSync",
      drifted: ["x"],
      requiresPruning: [],
      reason: "self-heal is off",
    });
    // An out-of-sync report without any differing object is not drift.
    m.recordEvent({ ...base, type: "outOfSync", drifted: [], requiresPruning: [], reason: "" });
    m.recordEvent({ ...base, type: "stuck", reason: "boom" });
    const text = await m.registry.metrics();
    assert.equal(
      sample(
        text,
        'syncward_syncs_total{app="shop",environment="prod",trigger="selfHeal",result="Succeeded"}',
      ),
      1,
    );
    assert.equal(sample(text, 'syncward_self_heals_total{app="shop",environment="prod"}'), 1);
    assert.equal(sample(text, 'syncward_drift_detected_total{app="shop",environment="prod"}'), 2);
    assert.equal(sample(text, 'syncward_drift_fights_total{app="shop",environment="prod"}'), 1);
    assert.equal(
      sample(text, 'syncward_reconciler_events_total{app="shop",environment="prod",type="stuck"}'),
      1,
    );
    assert.equal(
      sample(text, 'syncward_reconciler_events_total{app="shop",environment="prod",type="outOfSync"}'),
      2,
    );
  });

  it("keeps one syncward_app_info series per environment, following its status", async () => {
    const m = createMetrics({ defaultMetrics: false });
    const info = async () =>
      (await m.registry.metrics()).split("\n").filter((l) => l.startsWith("syncward_app_info{"));
    m.recordEvent({ ...base, type: "outOfSync", drifted: ["x"], requiresPruning: [], reason: "" });
    assert.deepEqual(await info(), [
      'syncward_app_info{app="shop",environment="prod",sync_status="OutOfSync",health_status="Unknown"} 1',
    ]);
    const synced = outcome("Succeeded", 2);
    synced.resources = [
      {
        group: "apps",
        kind: "Deployment",
        namespace: "shop",
        name: "web",
        status: "Synced",
        action: "configured",
        message: "",
        health: { status: "Progressing" },
      },
      {
        group: "",
        kind: "Service",
        namespace: "shop",
        name: "web",
        status: "Synced",
        action: "configured",
        message: "",
        health: { status: "Healthy" },
      },
    ];
    m.recordEvent({ ...base, type: "synced", trigger: "push", actor: "a", outcome: synced, entry });
    m.recordEvent({ ...base, instance: "billing.prod", type: "stuck", reason: "boom" });
    assert.deepEqual(await info(), [
      'syncward_app_info{app="shop",environment="prod",sync_status="Synced",health_status="Progressing"} 1',
      'syncward_app_info{app="billing",environment="prod",sync_status="Unknown",health_status="Degraded"} 1',
    ]);
    const text = await m.registry.metrics();
    assert.equal(
      sample(text, 'syncward_last_sync_timestamp_seconds{app="shop",environment="prod"}'),
      Date.parse(synced.finishedAt) / 1000,
    );
    assert.equal(
      sample(text, 'syncward_last_sync_timestamp_seconds{app="billing",environment="prod"}'),
      undefined,
    );
    assert.match(
      text,
      /^syncward_build_info\{version="\d+\.\d+\.\d+",commit="[0-9a-f]+|unknown",node="[\d.]+"\} 1$/m,
    );
  });

  it("syncward_environment_pinned follows the stored pin; a sync's event keeps it, an environment that goes loses it", async () => {
    const m = createMetrics({ defaultMetrics: false });
    const pinned = async () =>
      (await m.registry.metrics()).split("\n").filter((l) => l.startsWith("syncward_environment_pinned{"));
    const labels = { app: "shop", environment: "prod" };
    m.setAppStatus(labels, { sync: "Synced", health: "Healthy" });
    assert.deepEqual(await pinned(), ['syncward_environment_pinned{app="shop",environment="prod"} 0']);
    m.setAppStatus(labels, { sync: "Synced", health: "Healthy", pinned: true });
    assert.deepEqual(await pinned(), ['syncward_environment_pinned{app="shop",environment="prod"} 1']);
    m.recordEvent({
      ...base,
      type: "synced",
      trigger: "rollback",
      actor: "a",
      outcome: outcome("Succeeded", 1),
      entry,
    });
    assert.deepEqual(await pinned(), ['syncward_environment_pinned{app="shop",environment="prod"} 1']);
    m.setAppStatus(labels, { sync: "Synced", health: "Healthy" });
    assert.deepEqual(await pinned(), ['syncward_environment_pinned{app="shop",environment="prod"} 0']);
    m.setAppStatus(labels, undefined);
    assert.deepEqual(await pinned(), []);
  });

  it("counts GitHub requests by method and status", async () => {
    const m = createMetrics({ defaultMetrics: false });
    m.countGitHubRequest("post", 201);
    m.countGitHubRequest("POST", 201);
    m.countGitHubRequest("GET", 404);
    const text = await m.registry.metrics();
    assert.equal(sample(text, 'syncward_github_requests_total{method="POST",status="201"}'), 2);
    assert.equal(sample(text, 'syncward_github_requests_total{method="GET",status="404"}'), 1);
  });

  it("gauges the preview teardowns that have not finished, as the last read of the records found", async () => {
    const m = createMetrics({ defaultMetrics: false });
    assert.equal(sample(await m.registry.metrics(), "syncward_preview_teardowns_pending"), 0);
    m.previewTeardownsPending(2);
    assert.equal(sample(await m.registry.metrics(), "syncward_preview_teardowns_pending"), 2);
    m.previewTeardownsPending(0);
    assert.equal(sample(await m.registry.metrics(), "syncward_preview_teardowns_pending"), 0);
  });

  it("mirrors the Kubernetes clients' request counts by cluster, verb and code at scrape time", async () => {
    const own: Record<string, Record<string, number>> = { GET: { "200": 3 } };
    const edge: Record<string, Record<string, number>> = {};
    const m = createMetrics({
      defaultMetrics: false,
      kubernetesRequests: () => [
        ["kind-main", own],
        ["edge", edge],
      ],
    });
    const series = (cluster: string, verb: string, code: string) =>
      `syncward_kubernetes_requests_total{cluster="${cluster}",verb="${verb}",code="${code}"}`;
    assert.equal(sample(await m.registry.metrics(), series("kind-main", "GET", "200")), 3);
    own.GET = { "200": 5, "404": 2 };
    own.PATCH = { "409": 1 };
    edge.GET = { error: 4 };
    const text = await m.registry.metrics();
    assert.equal(sample(text, series("kind-main", "GET", "200")), 5);
    assert.equal(sample(text, series("kind-main", "GET", "404")), 2);
    assert.equal(sample(text, series("kind-main", "PATCH", "409")), 1);
    assert.equal(sample(text, series("edge", "GET", "error")), 4);
    assert.equal(sample(text, series("edge", "GET", "200")), undefined);
  });

  it("says which clusters answer and since when one does not, at scrape time", async () => {
    const prod = new Reachability();
    const dev = new Reachability();
    const m = createMetrics({
      defaultMetrics: false,
      clusters: () => [
        ["dev", dev.current],
        ["prod", prod.current],
      ],
    });
    prod.failed("cannot reach the API server at https://prod:6443: connect ECONNREFUSED", 1_700_000_000_000);
    let text = await m.registry.metrics();
    assert.equal(sample(text, 'syncward_cluster_reachable{cluster="dev"}'), 1);
    assert.equal(sample(text, 'syncward_cluster_reachable{cluster="prod"}'), 0);
    assert.equal(sample(text, 'syncward_cluster_unreachable_since_seconds{cluster="prod"}'), 1_700_000_000);
    assert.equal(sample(text, 'syncward_cluster_unreachable_since_seconds{cluster="dev"}'), undefined);
    prod.answered();
    text = await m.registry.metrics();
    assert.equal(sample(text, 'syncward_cluster_reachable{cluster="prod"}'), 1);
    assert.equal(sample(text, 'syncward_cluster_unreachable_since_seconds{cluster="prod"}'), undefined);
  });

  it("uses a registry of its own, with process metrics, so two instances never collide", async () => {
    const a = createMetrics();
    const b = createMetrics();
    a.countGitHubRequest("GET", 200);
    const text = await b.registry.metrics();
    assert.equal(sample(text, 'syncward_github_requests_total{method="GET",status="200"}'), undefined);
    assert.match(text, /^process_cpu_user_seconds_total /m);
    assert.match(text, /^nodejs_heap_size_used_bytes /m);
  });

  it("counts security-relevant reverts by manager, and gauges risky undeclared objects", async () => {
    const m = createMetrics({ defaultMetrics: false });
    const reverted = [
      { object: "k", path: "/spec/replicas", kind: "changed", manager: "kubectl", trusted: false },
      {
        object: "k",
        path: "/a",
        kind: "added",
        manager: "kubectl-patch",
        trusted: false,
        security: "privileged",
      },
      {
        object: "k",
        path: "/b",
        kind: "extra",
        manager: "kubectl-patch",
        trusted: false,
        security: "new container",
      },
    ];
    m.recordEvent({
      ...base,
      type: "selfHealed",
      drifted: [],
      outcome: outcome("Succeeded", 0),
      entry,
      reverted,
    });
    m.recordEvent({
      ...base,
      type: "orphans",
      orphans: [
        { object: "daemonset.apps/x in shop", risk: "a DaemonSet runs on every node" },
        { object: "cm" },
      ],
    });
    const text = await m.registry.metrics();
    assert.equal(
      sample(text, 'syncward_security_reverts_total{app="shop",environment="prod",manager="kubectl-patch"}'),
      2,
    );
    assert.equal(
      sample(text, 'syncward_security_reverts_total{app="shop",environment="prod",manager="kubectl"}'),
      undefined,
    );
    assert.equal(sample(text, 'syncward_risky_undeclared_objects{app="shop",environment="prod"}'), 1);
  });
});
