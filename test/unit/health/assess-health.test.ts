// Table-driven: each fixture is a live object and the health syncward must read from it.
import assert from "node:assert/strict";
import { readdirSync } from "node:fs";
import { describe, test } from "node:test";
import { assessHealth } from "../../../src/engine/health/index.ts";
import type { HealthStatus } from "../../../src/engine/result.ts";
import { FIXTURES, loadFixture } from "./fixtures.ts";

interface Case {
  /** File in test/fixtures/health. */
  fixture: string;
  /** undefined: the kind has no health notion. */
  status: HealthStatus | undefined;
  /** A fragment the message must contain, or null when there must be no message. */
  message: string | null;
}

const CASES: Case[] = [
  // Deployment
  { fixture: "deployment-healthy.yaml", status: "Healthy", message: null },
  { fixture: "deployment-paused.yaml", status: "Suspended", message: "Deployment is paused" },
  {
    fixture: "deployment-generation-not-observed.yaml",
    status: "Progressing",
    message: "not yet observed generation 4 (observed 3)",
  },
  {
    fixture: "deployment-progress-deadline-exceeded.yaml",
    status: "Degraded",
    message:
      'Deployment "web" exceeded its progress deadline: ReplicaSet "web-5c8f7d9b44" has timed out progressing.',
  },
  {
    fixture: "deployment-updating-replicas.yaml",
    status: "Progressing",
    message: "Waiting for rollout to finish: 1 out of 3 new replicas have been updated...",
  },
  {
    fixture: "deployment-old-replicas-terminating.yaml",
    status: "Progressing",
    message: "Waiting for rollout to finish: 1 old replicas are pending termination...",
  },
  {
    fixture: "deployment-updated-not-available.yaml",
    status: "Progressing",
    message: "Waiting for rollout to finish: 1 of 3 updated replicas are available...",
  },
  { fixture: "deployment-pending-deletion.yaml", status: "Progressing", message: "Pending deletion" },

  // StatefulSet
  {
    fixture: "statefulset-healthy.yaml",
    status: "Healthy",
    message: "Roll out complete: 3 pods updated and ready",
  },
  {
    fixture: "statefulset-not-observed.yaml",
    status: "Progressing",
    message: "Waiting for statefulset spec update to be observed",
  },
  {
    fixture: "statefulset-never-observed.yaml",
    status: "Progressing",
    message: "Waiting for statefulset spec update to be observed",
  },
  {
    fixture: "statefulset-pods-not-ready.yaml",
    status: "Progressing",
    message: "Waiting for 2 pods to be ready...",
  },
  {
    fixture: "statefulset-rolling-update.yaml",
    status: "Progressing",
    message: "Waiting for roll out to finish: 1 out of 3 new pods have been updated...",
  },
  {
    fixture: "statefulset-partition-progressing.yaml",
    status: "Progressing",
    message: "Waiting for partitioned roll out to finish: 0 out of 1 new pods have been updated...",
  },
  {
    fixture: "statefulset-partition-complete.yaml",
    status: "Healthy",
    message:
      "Partitioned roll out complete: 1 new pods have been updated (pods below ordinal 2 keep the old revision)",
  },
  {
    fixture: "statefulset-ondelete.yaml",
    status: "Healthy",
    message: "statefulset has 3 ready pods (1 updated)",
  },
  {
    fixture: "statefulset-revision-pending.yaml",
    status: "Progressing",
    message: "rolling update to complete: 1 pods at revision db-84f5d6c9b7",
  },
  {
    fixture: "statefulset-revision-complete.yaml",
    status: "Healthy",
    message: "rolling update complete: 3 pods at revision db-84f5d6c9b7",
  },

  // DaemonSet
  { fixture: "daemonset-healthy.yaml", status: "Healthy", message: null },
  {
    fixture: "daemonset-generation-not-observed.yaml",
    status: "Progressing",
    message: "not yet observed generation 5 (observed 4)",
  },
  {
    fixture: "daemonset-updating.yaml",
    status: "Progressing",
    message:
      'Waiting for daemon set "node-exporter" rollout to finish: 1 out of 3 new pods have been updated...',
  },
  {
    fixture: "daemonset-pods-unavailable.yaml",
    status: "Progressing",
    message: "2 of 3 updated pods are available (1 unavailable)",
  },
  {
    fixture: "daemonset-ondelete.yaml",
    status: "Healthy",
    message: "daemon set 1 out of 3 new pods have been updated",
  },

  // ReplicaSet
  { fixture: "replicaset-healthy.yaml", status: "Healthy", message: null },
  {
    fixture: "replicaset-generation-not-observed.yaml",
    status: "Progressing",
    message: "not yet observed generation 3 (observed 2)",
  },
  {
    fixture: "replicaset-scaling-up.yaml",
    status: "Progressing",
    message: "Waiting for rollout to finish: 1 out of 3 new replicas are available...",
  },
  { fixture: "replicaset-replica-failure.yaml", status: "Degraded", message: "exceeded quota: compute" },

  // Pod, restartPolicy Always
  { fixture: "pod-running-ready.yaml", status: "Healthy", message: null },
  {
    fixture: "pod-running-not-ready.yaml",
    status: "Progressing",
    message: "Waiting for containers to be ready: web",
  },
  {
    fixture: "pod-running-restarted-not-ready.yaml",
    status: "Degraded",
    message: 'container "web" is not ready and has restarted 2 times (last exit: OOMKilled, exit code 137)',
  },
  {
    fixture: "pod-crashloopbackoff.yaml",
    status: "Degraded",
    message: 'container "web" is in CrashLoopBackOff: back-off 2m40s restarting failed container=web',
  },
  {
    fixture: "pod-imagepullbackoff.yaml",
    status: "Degraded",
    message: 'container "web" is in ImagePullBackOff: Back-off pulling image "ghcr.io/acme/web:1.5.0-typo"',
  },
  {
    fixture: "pod-init-errimagepull.yaml",
    status: "Degraded",
    message: 'container "migrate" is in ErrImagePull: failed to pull and unpack image',
  },
  {
    fixture: "pod-pending-unschedulable.yaml",
    status: "Progressing",
    message: "Pod is not scheduled: 0/3 nodes are available: 3 Insufficient memory.",
  },
  {
    fixture: "pod-pending-container-creating.yaml",
    status: "Progressing",
    message: 'container "web" is in ContainerCreating',
  },
  {
    fixture: "pod-failed-evicted.yaml",
    status: "Degraded",
    message: "Evicted: The node was low on resource: memory.",
  },
  { fixture: "pod-unknown-phase.yaml", status: "Unknown", message: "NodeLost: Node worker-1" },
  // Pod, restartPolicy Never / OnFailure: Healthy only when Succeeded, errors not Degraded while pending.
  { fixture: "pod-restart-never-running.yaml", status: "Progressing", message: "Pod is running" },
  {
    fixture: "pod-restart-never-imagepullbackoff.yaml",
    status: "Progressing",
    message: 'container "migrate" is in ImagePullBackOff',
  },
  { fixture: "pod-succeeded.yaml", status: "Healthy", message: null },
  {
    fixture: "pod-failed-exit-code.yaml",
    status: "Degraded",
    message: 'container "migrate" failed with exit code 3',
  },
  {
    fixture: "pod-failed-termination-message.yaml",
    status: "Degraded",
    message: 'container "migrate": migration 0042_add_orders_index failed: relation "orders" does not exist',
  },
  { fixture: "pod-failed-oomkilled.yaml", status: "Degraded", message: 'container "migrate" was OOMKilled' },

  // Service
  { fixture: "service-clusterip.yaml", status: "Healthy", message: null },
  {
    fixture: "service-loadbalancer-pending.yaml",
    status: "Progressing",
    message: "Waiting for the load balancer to be assigned an address",
  },
  { fixture: "service-loadbalancer-assigned.yaml", status: "Healthy", message: null },

  // Ingress
  {
    fixture: "ingress-pending.yaml",
    status: "Progressing",
    message: "Waiting for the ingress controller to assign an address",
  },
  { fixture: "ingress-ip-assigned.yaml", status: "Healthy", message: "Address: 203.0.113.80" },
  {
    fixture: "ingress-hostname-assigned.yaml",
    status: "Healthy",
    message: "Address: k8s-shop-web-1a2b3c4d5e-1234567890.eu-west-1.elb.amazonaws.com",
  },

  // PersistentVolumeClaim
  { fixture: "pvc-bound.yaml", status: "Healthy", message: null },
  {
    fixture: "pvc-pending-provisioning.yaml",
    status: "Progressing",
    message: 'Waiting for the claim to be bound by storage class "standard" (provisioning for node worker-1)',
  },
  {
    fixture: "pvc-pending-no-consumer.yaml",
    status: "Progressing",
    message: "waits for a pod to use it",
  },
  { fixture: "pvc-lost.yaml", status: "Degraded", message: "lost its persistent volume" },
  { fixture: "pvc-no-phase.yaml", status: "Unknown", message: "Claim phase is not reported" },

  // Job
  { fixture: "job-not-started.yaml", status: "Progressing", message: "Waiting for the job to start" },
  {
    fixture: "job-running.yaml",
    status: "Progressing",
    message: "Job is running: 1 active, 0 succeeded, 0 failed",
  },
  {
    fixture: "job-running-with-retries.yaml",
    status: "Progressing",
    message: "1 active, 0 succeeded, 2 failed (2 of 3 retries used before backoff limit)",
  },
  {
    fixture: "job-failed-backoff-limit.yaml",
    status: "Degraded",
    message: "BackoffLimitExceeded: Job has reached the specified backoff limit",
  },
  {
    fixture: "job-failure-target.yaml",
    status: "Degraded",
    message: "DeadlineExceeded: Job was active longer than specified deadline",
  },
  { fixture: "job-complete.yaml", status: "Healthy", message: "Reached expected number of succeeded pods" },
  {
    fixture: "job-success-criteria-met.yaml",
    status: "Progressing",
    message: "met its success criteria; waiting for its pods to finish",
  },
  { fixture: "job-suspended.yaml", status: "Suspended", message: "Job suspended" },
  { fixture: "job-suspend-requested.yaml", status: "Suspended", message: "Job is suspended" },
  { fixture: "job-resumed.yaml", status: "Progressing", message: "Job is running: 1 active" },

  // CronJob
  // CronJob, as Argo CD's built-in check
  { fixture: "cronjob-suspended.yaml", status: "Suspended", message: "CronJob is Suspended" },
  { fixture: "cronjob-no-status.yaml", status: "Progressing", message: "Waiting for CronJob" },
  {
    fixture: "cronjob-never-scheduled.yaml",
    status: "Healthy",
    message: "CronJob has not been scheduled yet",
  },
  {
    fixture: "cronjob-running.yaml",
    status: "Healthy",
    message: "Job nightly-report-29014560 is running; the last finished run may not have succeeded",
  },
  {
    // A first run that failed is not Degraded forever: the next one may succeed (Argo CD: Healthy).
    fixture: "cronjob-never-succeeded.yaml",
    status: "Healthy",
    message:
      "CronJob has never completed successfully (last scheduled 2025-03-03T02:00:00Z); it may not be healthy",
  },
  {
    fixture: "cronjob-last-run-failed.yaml",
    status: "Degraded",
    message:
      "has not completed its last run successfully (scheduled 2025-03-03T02:00:00Z, last success 2025-03-02T02:00:39Z)",
  },
  {
    fixture: "cronjob-last-run-succeeded.yaml",
    status: "Healthy",
    message: "CronJob completed its last run successfully at 2025-03-03T02:00:41Z",
  },

  // HorizontalPodAutoscaler, as gitops-engine: the first known condition decides
  {
    fixture: "hpa-v2-healthy.yaml",
    status: "Healthy",
    message: "the desired count is within the acceptable range",
  },
  {
    fixture: "hpa-v2-scaling-limited.yaml",
    status: "Healthy",
    message: "the desired replica count is more than the maximum replica count",
  },
  {
    fixture: "hpa-v2-failed-get-scale.yaml",
    status: "Degraded",
    message: "the HPA controller was unable to get the target's current scale",
  },
  {
    fixture: "hpa-v2-metrics-unavailable.yaml",
    status: "Degraded",
    message: "the HPA was unable to compute the replica count",
  },
  {
    // The case: SucceededRescale comes first, so metrics not served yet do not fail the wave.
    fixture: "hpa-v2-rescaled-metrics-pending.yaml",
    status: "Healthy",
    message: "the HPA controller was able to update the target scale to 2",
  },
  // gitops-engine's hpa-v2-progressing: the target is at zero, so the HPA is waiting to autoscale.
  { fixture: "hpa-v2-progressing.yaml", status: "Progressing", message: "Waiting to Autoscale" },
  { fixture: "hpa-v2-scaling-disabled.yaml", status: "Progressing", message: "Waiting to Autoscale" },
  { fixture: "hpa-v2-no-conditions.yaml", status: "Progressing", message: "Waiting to Autoscale" },
  { fixture: "hpa-v2-just-created.yaml", status: "Progressing", message: "Waiting to Autoscale" },
  { fixture: "hpa-v2-scaling-active-unknown.yaml", status: "Progressing", message: "Waiting to Autoscale" },
  {
    fixture: "hpa-v2-backoff.yaml",
    status: "Healthy",
    message: "the desired count is within the acceptable range",
  },
  {
    fixture: "hpa-v1-healthy.yaml",
    status: "Healthy",
    message: "the desired count is within the acceptable range",
  },
  {
    fixture: "hpa-v1-invalid-selector.yaml",
    status: "Degraded",
    message: "the HPA target's scale is missing a selector",
  },
  { fixture: "hpa-v1-no-annotation.yaml", status: "Progressing", message: "Waiting to Autoscale" },
  {
    fixture: "hpa-v1-garbled-annotation.yaml",
    status: "Unknown",
    message: "cannot read the autoscaling.alpha.kubernetes.io/conditions annotation",
  },

  // APIService
  { fixture: "apiservice-available.yaml", status: "Healthy", message: "Passed: all checks passed" },
  {
    fixture: "apiservice-local.yaml",
    status: "Healthy",
    message: "Local: Local APIServices are always available",
  },
  {
    fixture: "apiservice-unavailable.yaml",
    status: "Progressing",
    message: "FailedDiscoveryCheck: failing or missing response",
  },
  {
    fixture: "apiservice-not-checked.yaml",
    status: "Progressing",
    message: "Waiting for the API aggregator to check the service",
  },

  // CustomResourceDefinition
  { fixture: "crd-established.yaml", status: "Healthy", message: null },
  {
    fixture: "crd-installing.yaml",
    status: "Progressing",
    message: "Waiting for the CRD to be established: the initial names have been accepted",
  },
  {
    fixture: "crd-names-conflict.yaml",
    status: "Degraded",
    message: 'CRD names have not been accepted: "cert" is already in use',
  },
  {
    fixture: "crd-no-conditions.yaml",
    status: "Progressing",
    message: "Waiting for the API server to accept the CRD",
  },
  {
    fixture: "crd-terminating.yaml",
    status: "Progressing",
    message: "Pending deletion: CustomResource deletion is in progress",
  },
  {
    fixture: "crd-non-structural.yaml",
    status: "Degraded",
    message: "CRD schema is not structural: spec.versions[0]",
  },

  // Namespace
  { fixture: "namespace-active.yaml", status: "Healthy", message: null },
  {
    fixture: "namespace-terminating-stuck.yaml",
    status: "Progressing",
    message:
      "Pending deletion: Some resources are remaining: certificates.cert-manager.io has 1 resource instances; Some content in the namespace has finalizers remaining",
  },
  { fixture: "namespace-terminating.yaml", status: "Progressing", message: "Pending deletion" },
  {
    fixture: "namespace-no-status.yaml",
    status: "Progressing",
    message: "Waiting for the namespace to become active",
  },
  { fixture: "namespace-unknown-phase.yaml", status: "Unknown", message: "Unknown namespace phase Archived" },

  // Generic Ready / Available conditions (custom resources), and kinds without health
  {
    fixture: "conditions-ready-true.yaml",
    status: "Healthy",
    message: "Certificate is up to date and has not expired",
  },
  {
    // Ready False for a reason that is not a failure: still working on it.
    fixture: "conditions-ready-false.yaml",
    status: "Progressing",
    message: "Issuing certificate as Secret does not exist",
  },
  {
    fixture: "conditions-ready-unknown.yaml",
    status: "Progressing",
    message: "Waiting for the issuer to respond",
  },
  {
    fixture: "conditions-stale-generation.yaml",
    status: "Progressing",
    message: "Waiting for the controller to observe generation 2 (status describes generation 1)",
  },
  {
    fixture: "conditions-reconciling.yaml",
    status: "Progressing",
    message: "Issuing a new certificate for 1 DNS name",
  },
  { fixture: "conditions-available-true.yaml", status: "Healthy", message: null },
  {
    fixture: "conditions-available-false.yaml",
    status: "Progressing",
    message: "shard 0: pod prometheus-main-1: containers with unready status: [prometheus]",
  },
  { fixture: "conditions-no-ready.yaml", status: undefined, message: null },
  // Custom resources through the generic condition rule
  {
    fixture: "certificate-issuing.yaml",
    status: "Progressing",
    message: "Issuing certificate as Secret does not exist",
  },
  {
    fixture: "certificate-issuance-failed.yaml",
    status: "Degraded",
    message: "Issuing: Failed: The certificate request has failed to complete and will be retried",
  },
  { fixture: "bucket-creating.yaml", status: "Progressing", message: "Creating" },
  {
    fixture: "bucket-reconcile-error.yaml",
    status: "Degraded",
    message: "Synced: ReconcileError: create failed: failed to create the Bucket",
  },
  {
    fixture: "kustomization-build-failed.yaml",
    status: "Degraded",
    message: "BuildFailed: kustomize build failed",
  },
  {
    fixture: "kustomization-stalled.yaml",
    status: "Degraded",
    message: "Stalled: DependencyNotReady: dependency not ready: retrying in 30s",
  },
  {
    fixture: "kustomization-waiting-for-dependency.yaml",
    status: "Progressing",
    message: "dependency 'flux-system/infra' is not ready",
  },

  // PodDisruptionBudget, as Argo CD's built-in check
  {
    fixture: "pdb-sufficient-pods.yaml",
    status: "Healthy",
    message: "PodDisruptionBudget has SufficientPods",
  },
  {
    fixture: "pdb-insufficient-pods.yaml",
    status: "Healthy",
    message: "PodDisruptionBudget has InsufficientPods",
  },
  {
    fixture: "pdb-sync-failed.yaml",
    status: "Degraded",
    message: 'PodDisruptionBudget has SyncFailed: found no controllers for pod "web-7d9c8b6f5-abcde"',
  },
  {
    fixture: "pdb-no-status.yaml",
    status: "Progressing",
    message: "Waiting for the disruption controller's status",
  },

  // Argo Rollouts
  { fixture: "rollout-healthy.yaml", status: "Healthy", message: null },
  { fixture: "rollout-paused-canary.yaml", status: "Suspended", message: "CanaryPauseStep" },
  {
    fixture: "rollout-aborted.yaml",
    status: "Degraded",
    message: "Rollout is aborted: RolloutAborted: Rollout aborted update to revision 5",
  },
  { fixture: "rollout-progressing.yaml", status: "Progressing", message: "more replicas need to be updated" },
  {
    fixture: "rollout-spec-not-observed.yaml",
    status: "Progressing",
    message: "Waiting for rollout spec update to be observed",
  },
  {
    fixture: "rollout-invalid-spec.yaml",
    status: "Degraded",
    message: 'The Rollout "checkout" is invalid: spec.strategy.canary.steps[1].pause.duration',
  },
  { fixture: "configmap-no-health.yaml", status: undefined, message: null },
  { fixture: "configmap-pending-deletion.yaml", status: "Progressing", message: "Pending deletion" },
];

describe("assessHealth", () => {
  for (const c of CASES) {
    test(`${c.fixture} -> ${c.status ?? "no health"}`, () => {
      const health = assessHealth(loadFixture(c.fixture));
      if (c.status === undefined) {
        assert.equal(health, undefined);
        return;
      }
      assert.ok(health, "expected a health value");
      assert.equal(health.status, c.status, `message was: ${health.message}`);
      if (c.message === null) {
        assert.equal(health.message, undefined);
      } else {
        assert.ok(
          health.message?.includes(c.message),
          `message ${JSON.stringify(health.message)} should contain ${JSON.stringify(c.message)}`,
        );
      }
    });
  }

  test("every fixture has an expectation, and every expectation a fixture", () => {
    const files = readdirSync(FIXTURES).filter((f) => f.endsWith(".yaml"));
    const listed = CASES.map((c) => c.fixture);
    assert.deepEqual([...files].sort(), [...listed].sort());
    assert.equal(new Set(listed).size, listed.length, "a fixture is listed twice");
  });

  test("every kind is covered by at least three situations", () => {
    const kinds = [
      "deployment",
      "statefulset",
      "daemonset",
      "replicaset",
      "pod",
      "service",
      "ingress",
      "pvc",
      "job",
      "cronjob",
      "hpa",
      "apiservice",
      "crd",
      "namespace",
      "conditions",
      "rollout",
      "pdb",
    ];
    for (const kind of kinds) {
      const situations = CASES.filter((c) => c.fixture.startsWith(`${kind}-`));
      assert.ok(situations.length >= 3, `${kind} has ${situations.length} situations`);
    }
  });
});
