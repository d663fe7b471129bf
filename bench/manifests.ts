// Realistic manifests for the engine benchmark, written as YAML files the way a team's repository
// holds them: one file per app with its ServiceAccount, ConfigMap, Secret, Service and Deployment,
// in a folder per team. No namespaces in the files: each tool puts them in its own namespace.
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { stringify } from "yaml";

export const KINDS_PER_APP = 5;

function appObjects(team: string, app: string, index: number): Record<string, unknown>[] {
  const labels = { "app.kubernetes.io/name": app, "app.kubernetes.io/part-of": team, tier: "backend" };
  // The local plane's service CIDR is a /24 (254 addresses shared by every test), so only one
  // Service in ten takes a cluster IP; the others are headless.
  const headless = index % 10 !== 0;
  return [
    { apiVersion: "v1", kind: "ServiceAccount", metadata: { name: app, labels } },
    {
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: `${app}-config`, labels },
      data: {
        LOG_LEVEL: "info",
        UPSTREAM_URL: `http://${app}-upstream.${team}.svc.cluster.local:8080`,
        FEATURE_FLAGS: "checkout-v2,fast-refunds",
        "application.yaml": `server:\n  port: 8080\ncache:\n  ttl: 30s\n  size: ${1000 + index}\n`,
      },
    },
    {
      apiVersion: "v1",
      kind: "Secret",
      metadata: { name: `${app}-credentials`, labels },
      type: "Opaque",
      data: {
        username: Buffer.from(`${app}-user`).toString("base64"),
        password: Buffer.from(`s3cret-${index}-${app}`).toString("base64"),
      },
    },
    {
      apiVersion: "v1",
      kind: "Service",
      metadata: { name: app, labels },
      spec: {
        ...(headless ? { clusterIP: "None" } : {}),
        selector: { "app.kubernetes.io/name": app },
        ports: [
          { name: "http", port: 80, targetPort: "http" },
          { name: "metrics", port: 9090, targetPort: 9090 },
        ],
      },
    },
    {
      apiVersion: "apps/v1",
      kind: "Deployment",
      metadata: { name: app, labels },
      spec: {
        replicas: 1,
        selector: { matchLabels: { "app.kubernetes.io/name": app } },
        template: {
          metadata: { labels, annotations: { "prometheus.io/scrape": "true" } },
          spec: {
            serviceAccountName: app,
            containers: [
              {
                name: "app",
                image: `registry.example.com/${team}/${app}:1.${index % 7}.0`,
                ports: [
                  { name: "http", containerPort: 8080 },
                  { name: "metrics", containerPort: 9090 },
                ],
                envFrom: [{ configMapRef: { name: `${app}-config` } }],
                env: [
                  {
                    name: "DB_PASSWORD",
                    valueFrom: { secretKeyRef: { name: `${app}-credentials`, key: "password" } },
                  },
                ],
                resources: {
                  requests: { cpu: "50m", memory: "64Mi" },
                  limits: { cpu: "500m", memory: "256Mi" },
                },
                readinessProbe: { httpGet: { path: "/healthz", port: "http" }, periodSeconds: 10 },
              },
            ],
          },
        },
      },
    },
  ];
}

/** Writes `apps` apps (5 objects each) under a fresh temp dir; returns the dir. */
export function writeManifests(apps: number, teams = 10): string {
  const dir = mkdtempSync(join(tmpdir(), "syncward-bench-manifests-"));
  for (let i = 0; i < apps; i++) {
    const team = `team-${String(i % teams).padStart(2, "0")}`;
    const app = `app-${String(i).padStart(4, "0")}`;
    mkdirSync(join(dir, team), { recursive: true });
    const docs = appObjects(team, app, i).map((o) => stringify(o));
    writeFileSync(join(dir, team, `${app}.yaml`), docs.join("---\n"));
  }
  return dir;
}
