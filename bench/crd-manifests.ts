// A CRD set in the shape of prometheus-operator's setup manifests, generated rather than checked in:
// ten CustomResourceDefinitions of about 5 MB of YAML in all, each a controller-gen openAPIV3Schema
// (deeply nested `properties`, long `description`s, `items`, `required`, `enum`, `format`, the
// `x-kubernetes-*` markers, int-or-string `anyOf`s) with one to three versions that repeat the
// schema, as multi-version CRDs do. Deterministic: the same seed writes the same bytes.
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { stringify } from "yaml";

type Json = Record<string, unknown>;

/** Small deterministic PRNG (mulberry32), so every run benchmarks the same documents. */
function random(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const WORDS = (
  "the of a to is for in that be defines specifies field when if this not set which container pod " +
  "value name selector label resource must default are used with by cluster namespace endpoint " +
  "scrape target configuration secret key reference optional required deprecated prometheus " +
  "alertmanager rule interval timeout port path tls certificate authorization header relabel " +
  "volume mount probe affinity toleration topology spread constraint node term expression operator"
).split(" ");

const FIELD_NAMES = (
  "affinity tolerations volumes volumeMounts containers initContainers env envFrom resources " +
  "securityContext nodeSelector podMetadata labels annotations selector matchLabels matchExpressions " +
  "key operator values endpoints port path scheme interval scrapeTimeout tlsConfig ca cert keySecret " +
  "serverName insecureSkipVerify bearerTokenSecret basicAuth username password oauth2 clientId " +
  "clientSecret tokenUrl scopes endpointParams relabelings metricRelabelings sourceLabels separator " +
  "targetLabel regex modulus replacement action proxyUrl noProxy followRedirects enableHttp2 " +
  "storage volumeClaimTemplate spec accessModes dataSource storageClassName retention retentionSize " +
  "replicas shards image imagePullPolicy imagePullSecrets serviceAccountName priorityClassName " +
  "topologySpreadConstraints maxSkew whenUnsatisfiable labelSelector minDomains nodeAffinityPolicy " +
  "livenessProbe readinessProbe startupProbe httpGet tcpSocket grpc exec command args workingDir " +
  "lifecycle preStop postStart capabilities add drop runAsUser runAsGroup fsGroup seccompProfile " +
  "remoteWrite remoteRead queueConfig capacity maxShards minShards batchSendDeadline metadataConfig " +
  "alerting alertmanagers apiVersion pathPrefix web pageTitle httpConfig headers routePrefix externalUrl"
).split(" ");

function sentence(rnd: () => number, words: number): string {
  const out: string[] = [];
  for (let i = 0; i < words; i++) out.push(WORDS[Math.floor(rnd() * WORDS.length)]!);
  const text = out.join(" ");
  return `${text[0]?.toUpperCase()}${text.slice(1)}.`;
}

/** controller-gen descriptions: a few sentences, sometimes a paragraph break and a deprecation note. */
function description(rnd: () => number): string {
  const parts = [sentence(rnd, 6 + Math.floor(rnd() * 20))];
  if (rnd() < 0.5) parts.push(sentence(rnd, 10 + Math.floor(rnd() * 30)));
  if (rnd() < 0.25) parts.push(`\n${sentence(rnd, 8 + Math.floor(rnd() * 16))}`);
  if (rnd() < 0.05) parts.push("\nDeprecated: use the field of the same name in the spec instead.");
  return parts.join("\n");
}

function leaf(rnd: () => number): Json {
  const r = rnd();
  const base: Json = { description: description(rnd) };
  if (r < 0.45) return { ...base, type: "string" };
  if (r < 0.55) return { ...base, enum: ["Always", "Never", "IfNotPresent"], type: "string" };
  if (r < 0.62)
    return {
      ...base,
      pattern: "^(0|(([0-9]+)y)?(([0-9]+)w)?(([0-9]+)d)?(([0-9]+)h)?(([0-9]+)m)?(([0-9]+)s)?(([0-9]+)ms)?)$",
      type: "string",
    };
  if (r < 0.72) return { ...base, format: "int32", type: "integer" };
  if (r < 0.8) return { ...base, type: "boolean" };
  if (r < 0.88)
    return {
      ...base,
      anyOf: [{ type: "integer" }, { type: "string" }],
      pattern:
        "^(\\+|-)?(([0-9]+(\\.[0-9]*)?)|(\\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|([eE](\\+|-)?(([0-9]+(\\.[0-9]*)?)|(\\.[0-9]+))))?$",
      "x-kubernetes-int-or-string": true,
    };
  if (r < 0.94) return { ...base, additionalProperties: { type: "string" }, type: "object" };
  return { ...base, type: "object", "x-kubernetes-preserve-unknown-fields": true };
}

/** An object schema `depth` levels deep with about `width` properties per level. */
function objectSchema(rnd: () => number, depth: number, width: number): Json {
  const properties: Json = {};
  const count = Math.max(2, Math.floor(width * (0.5 + rnd())));
  const required: string[] = [];
  for (let i = 0; i < count; i++) {
    let name = FIELD_NAMES[Math.floor(rnd() * FIELD_NAMES.length)]!;
    while (name in properties) name = `${name}${Math.floor(rnd() * 10)}`;
    const r = rnd();
    if (depth > 0 && r < 0.3) properties[name] = objectSchema(rnd, depth - 1, width);
    else if (depth > 0 && r < 0.5) {
      const mapList = rnd() < 0.4;
      properties[name] = {
        description: description(rnd),
        items: objectSchema(rnd, depth - 1, width),
        type: "array",
        ...(mapList
          ? { "x-kubernetes-list-map-keys": ["name"], "x-kubernetes-list-type": "map" }
          : { "x-kubernetes-list-type": "atomic" }),
      };
    } else if (r < 0.58)
      properties[name] = { description: description(rnd), items: { type: "string" }, type: "array" };
    else properties[name] = leaf(rnd);
    if (rnd() < 0.1) required.push(name);
  }
  const sorted = Object.fromEntries(Object.entries(properties).sort(([a], [b]) => (a < b ? -1 : 1)));
  return {
    description: description(rnd),
    properties: sorted,
    ...(required.length > 0 ? { required: required.sort() } : {}),
    type: "object",
    ...(rnd() < 0.15 ? { "x-kubernetes-map-type": "atomic" } : {}),
  };
}

/** prometheus-operator's ten kinds, with the share of the 5 MB each one's schema takes. */
export const CRD_KINDS: Array<{
  kind: string;
  plural: string;
  short: string;
  weight: number;
  versions: string[];
}> = [
  { kind: "Alertmanager", plural: "alertmanagers", short: "am", weight: 12, versions: ["v1"] },
  {
    kind: "AlertmanagerConfig",
    plural: "alertmanagerconfigs",
    short: "amcfg",
    weight: 12,
    versions: ["v1alpha1", "v1beta1"],
  },
  { kind: "PodMonitor", plural: "podmonitors", short: "pmon", weight: 4, versions: ["v1"] },
  { kind: "Probe", plural: "probes", short: "prb", weight: 4, versions: ["v1"] },
  { kind: "Prometheus", plural: "prometheuses", short: "prom", weight: 22, versions: ["v1"] },
  {
    kind: "PrometheusAgent",
    plural: "prometheusagents",
    short: "promagent",
    weight: 16,
    versions: ["v1alpha1"],
  },
  { kind: "PrometheusRule", plural: "prometheusrules", short: "promrule", weight: 1, versions: ["v1"] },
  { kind: "ScrapeConfig", plural: "scrapeconfigs", short: "scfg", weight: 10, versions: ["v1alpha1"] },
  { kind: "ServiceMonitor", plural: "servicemonitors", short: "smon", weight: 4, versions: ["v1"] },
  { kind: "ThanosRuler", plural: "thanosrulers", short: "ruler", weight: 15, versions: ["v1"] },
];

/** A `spec` schema of about `bytes` of YAML: top-level fields of nested subtrees until it gets there. */
function schemaOfSize(seed: number, bytes: number): Json {
  const rnd = random(seed);
  const properties: Json = {};
  let size = 0;
  for (let i = 0; size < bytes; i++) {
    const name = `${FIELD_NAMES[i % FIELD_NAMES.length]!}${i >= FIELD_NAMES.length ? Math.floor(i / FIELD_NAMES.length) : ""}`;
    const subtree = rnd() < 0.6 ? objectSchema(rnd, 4, 4) : leaf(rnd);
    properties[name] = subtree;
    size += stringify(subtree).length + name.length;
  }
  const sorted = Object.fromEntries(Object.entries(properties).sort(([a], [b]) => (a < b ? -1 : 1)));
  return { description: description(rnd), properties: sorted, type: "object" };
}

export function crd(group: string, i: number, totalBytes: number): Json {
  const k = CRD_KINDS[i]!;
  const weights = CRD_KINDS.reduce((n, c) => n + c.weight, 0);
  // The subtrees are measured on their own; nested under the schema they take about 1.2x the bytes.
  const perVersion = (totalBytes * k.weight) / weights / k.versions.length / 1.2;
  const rnd = random(1000 + i);
  const spec = schemaOfSize(2000 + i, perVersion);
  const schema = {
    openAPIV3Schema: {
      description: `${k.kind} defines a ${k.kind} deployment. ${sentence(rnd, 20)}`,
      properties: {
        apiVersion: { description: sentence(rnd, 30), type: "string" },
        kind: { description: sentence(rnd, 30), type: "string" },
        metadata: { type: "object" },
        spec,
        status: objectSchema(random(3000 + i), 2, 6),
      },
      required: ["spec"],
      type: "object",
    },
  };
  return {
    apiVersion: "apiextensions.k8s.io/v1",
    kind: "CustomResourceDefinition",
    metadata: {
      annotations: {
        "controller-gen.kubebuilder.io/version": "v0.16.4",
        "operator.prometheus.io/version": "0.79.2",
      },
      name: `${k.plural}.${group}`,
    },
    spec: {
      group,
      names: {
        categories: ["prometheus-operator"],
        kind: k.kind,
        listKind: `${k.kind}List`,
        plural: k.plural,
        shortNames: [k.short],
        singular: k.kind.toLowerCase(),
      },
      scope: "Namespaced",
      versions: k.versions.map((name, v) => ({
        additionalPrinterColumns: [
          {
            description: "The version of the deployed component",
            jsonPath: ".spec.version",
            name: "Version",
            type: "string",
          },
          { jsonPath: ".metadata.creationTimestamp", name: "Age", type: "date" },
        ],
        name,
        schema,
        served: true,
        storage: v === k.versions.length - 1,
        subresources: { status: {} },
      })),
    },
  };
}

/**
 * Writes the set as a kustomization (one file per CRD, as the operator's `setup/` folder holds them)
 * into a new temporary folder, and returns it with the objects and the bytes written.
 */
export function writeCrdSet(
  group: string,
  totalBytes = 5_000_000,
): { dir: string; objects: Json[]; bytes: number } {
  const dir = mkdtempSync(join(tmpdir(), "syncward-bench-crds-"));
  mkdirSync(join(dir, "setup"));
  const objects: Json[] = [];
  const files: string[] = [];
  let bytes = 0;
  for (let i = 0; i < CRD_KINDS.length; i++) {
    const object = crd(group, i, totalBytes);
    const name = `0prometheus-operator-${CRD_KINDS[i]!.plural}-CustomResourceDefinition.yaml`;
    // sigs.k8s.io/yaml's layout: sequences at their key's indentation, long lines kept.
    const text = `---\n${stringify(object, { indentSeq: false, lineWidth: 0 })}`;
    writeFileSync(join(dir, "setup", name), text);
    objects.push(object);
    files.push(name);
    bytes += text.length;
  }
  writeFileSync(
    join(dir, "setup", "kustomization.yaml"),
    `resources:\n${files.map((f) => `- ${f}\n`).join("")}`,
  );
  return { dir: join(dir, "setup"), objects, bytes };
}
