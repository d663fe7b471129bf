// A synthetic live side for the diff-and-plan benchmark, without a cluster: each applied object as
// the API server returns it (server metadata, a managedFields entry, the defaults the server fills
// in, a status), so that the comparison walks as much as it does against a real cluster.
import type { KubeObject } from "../src/kube/object.ts";

type Json = Record<string, unknown>;

/** fieldsV1 for `value`: every map key as `f:key`, lists as one `.` entry (what matters is the size). */
function fieldsOf(value: unknown): Json {
  if (Array.isArray(value)) return { ".": {} };
  if (value && typeof value === "object") {
    const out: Json = {};
    for (const [k, v] of Object.entries(value as Json)) out[`f:${k}`] = fieldsOf(v);
    return out;
  }
  return {};
}

function podDefaults(spec: Json): Json {
  const containers = (spec.containers as Json[] | undefined)?.map((c) => ({
    ...c,
    imagePullPolicy: "IfNotPresent",
    terminationMessagePath: "/dev/termination-log",
    terminationMessagePolicy: "File",
    ports: (c.ports as Json[] | undefined)?.map((p) => ({ ...p, protocol: "TCP" })),
    readinessProbe: c.readinessProbe
      ? {
          ...(c.readinessProbe as Json),
          timeoutSeconds: 1,
          successThreshold: 1,
          failureThreshold: 3,
          httpGet: { ...((c.readinessProbe as Json).httpGet as Json), scheme: "HTTP" },
        }
      : undefined,
  }));
  return {
    ...spec,
    containers,
    restartPolicy: "Always",
    terminationGracePeriodSeconds: 30,
    dnsPolicy: "ClusterFirst",
    serviceAccount: spec.serviceAccountName,
    securityContext: {},
    schedulerName: "default-scheduler",
  };
}

function withDefaults(obj: KubeObject, index: number): KubeObject {
  const spec = (obj.spec ?? {}) as Json;
  switch (obj.kind) {
    case "Deployment": {
      const template = spec.template as Json;
      return {
        ...obj,
        spec: {
          ...spec,
          template: { ...template, spec: podDefaults(template.spec as Json) },
          strategy: { type: "RollingUpdate", rollingUpdate: { maxUnavailable: "25%", maxSurge: "25%" } },
          revisionHistoryLimit: 10,
          progressDeadlineSeconds: 600,
        },
        status: {
          observedGeneration: 1,
          replicas: 1,
          updatedReplicas: 1,
          readyReplicas: 1,
          availableReplicas: 1,
          conditions: [
            { type: "Available", status: "True", reason: "MinimumReplicasAvailable" },
            { type: "Progressing", status: "True", reason: "NewReplicaSetAvailable" },
          ],
        },
      };
    }
    case "Service": {
      const ip = spec.clusterIP ?? `10.96.${(index >> 8) & 255}.${index & 255}`;
      return {
        ...obj,
        spec: {
          ...spec,
          ports: (spec.ports as Json[]).map((p) => ({ ...p, protocol: "TCP" })),
          clusterIP: ip,
          clusterIPs: [ip],
          type: "ClusterIP",
          sessionAffinity: "None",
          ipFamilies: ["IPv4"],
          ipFamilyPolicy: "SingleStack",
          internalTrafficPolicy: "Cluster",
        },
        status: { loadBalancer: {} },
      };
    }
    default:
      return obj;
  }
}

/** `obj` (as applied, with tracking) as a GET returns it after a server-side apply. */
export function asLive(obj: KubeObject, index: number): KubeObject {
  const clone = structuredClone(obj);
  const live = withDefaults(clone, index);
  live.metadata = {
    ...live.metadata,
    uid: `00000000-0000-4000-8000-${String(index).padStart(12, "0")}`,
    resourceVersion: String(100_000 + index),
    generation: 1,
    creationTimestamp: "2026-11-29T20:00:00Z",
    managedFields: [
      {
        manager: "syncward",
        operation: "Apply",
        apiVersion: obj.apiVersion,
        time: "2026-11-29T20:00:00Z",
        fieldsType: "FieldsV1",
        fieldsV1: fieldsOf({ metadata: obj.metadata, spec: obj.spec, data: obj.data }),
      },
    ],
  };
  return live;
}

/** Changes `live` the way someone editing it by hand would (a field of the kind's usual drift). */
export function drift(live: KubeObject): void {
  const l = live as Json & KubeObject;
  switch (live.kind) {
    case "Deployment":
      (l.spec as Json).replicas = 3;
      break;
    case "ConfigMap":
      (l.data as Json).LOG_LEVEL = "debug";
      break;
    case "Secret":
      (l.data as Json).password = Buffer.from("changed by hand").toString("base64");
      break;
    case "Service":
      ((l.spec as Json).ports as Json[])[0]!.port = 8080;
      break;
    default:
      live.metadata.labels = { ...live.metadata.labels, edited: "by-hand" };
  }
}
