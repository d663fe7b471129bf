// `syncward cluster add|list|rm`: the cluster registry (one Secret per cluster in syncward's
// namespace, see kube/cluster-secret.ts), managed from kubeconfig contexts as `argocd cluster add`
// does. The Secret goes to the cluster of --context (default: the current one); the credentials
// come from the named context. No credential is ever printed.
import { readFileSync } from "node:fs";
import { KubeClient } from "../../kube/client.ts";
import { CLUSTER_SELECTOR, entriesOf } from "../../kube/cluster-registry.ts";
import { clusterSecretFor, clusterSecretName } from "../../kube/cluster-secret.ts";
import { KubeApiError } from "../../kube/errors.ts";
import { findKubeconfig } from "../../kube/kubeconfig.ts";
import { selectContext } from "../../kube/kubeconfig-parse.ts";
import type { KubeObject } from "../../kube/object.ts";
import { type CliIO, EXIT } from "../io.ts";
import { printStructured, structured } from "../output.ts";
import type { Values } from "../spec.ts";
import { UsageError } from "../usage-error.ts";

const read = (file: string | undefined) => (file ? readFileSync(file, "utf8") : undefined);

export async function clusterCommand(
  verb: string,
  args: string[],
  values: Values,
  io: CliIO,
): Promise<number> {
  const namespace = (values["state-namespace"] as string | undefined) ?? "syncward";
  const kubeconfig = values.kubeconfig as string | undefined;
  let own: KubeClient;
  try {
    own = KubeClient.fromKubeconfig({ kubeconfig, context: values.context as string | undefined });
  } catch (err) {
    throw new UsageError(`kubeconfig: ${(err as Error).message}`);
  }
  try {
    if (verb === "add") return await add(own, namespace, args, values, io);
    if (verb === "rm") return await rm(own, namespace, args, io);
    return await list(own, namespace, values, io);
  } finally {
    own.close();
  }
}

async function add(
  own: KubeClient,
  namespace: string,
  args: string[],
  values: Values,
  io: CliIO,
): Promise<number> {
  const [contextName] = args;
  if (!contextName) throw new UsageError("usage: syncward cluster add CONTEXT [--name NAME]");
  const { doc, source } = findKubeconfig({ file: values.kubeconfig as string | undefined });
  let selection: ReturnType<typeof selectContext>;
  try {
    selection = selectContext(doc, source, contextName);
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
  const { cluster, user } = selection;
  const name = (values.name as string | undefined) ?? contextName;
  const secret = clusterSecretFor(name, namespace, selection, {
    ca: read(cluster.caFile),
    cert: read(user.certFile),
    key: read(user.keyFile),
    token: user.token ?? read(user.tokenFile)?.trim(),
  });
  const existing = await own.get("v1", "Secret", namespace, secret.metadata.name);
  if (existing) {
    secret.metadata.resourceVersion = existing.metadata.resourceVersion;
    await own.replace(secret);
  } else await own.create(secret);
  io.out(
    `cluster ${name} (${cluster.server}) ${existing ? "updated" : "added"}: Secret ${namespace}/${secret.metadata.name}`,
  );
  return EXIT.ok;
}

async function rm(own: KubeClient, namespace: string, args: string[], io: CliIO): Promise<number> {
  const [name] = args;
  if (!name) throw new UsageError("usage: syncward cluster rm NAME");
  const listed = await own.list("v1", "Secret", { namespace, labelSelector: CLUSTER_SELECTOR });
  const entry = entriesOf(listed.items).get(name);
  const secretName = entry?.secret ?? clusterSecretName(name);
  const deleted = await own.delete({
    apiVersion: "v1",
    group: "",
    kind: "Secret",
    namespace,
    name: secretName,
  });
  if (!deleted) {
    io.err(`no cluster ${name} in ${namespace} (syncward cluster list shows the registered ones)`);
    return EXIT.error;
  }
  io.out(`cluster ${name} removed: its environments fail (unknown destination) until it is added again`);
  return EXIT.ok;
}

async function list(own: KubeClient, namespace: string, values: Values, io: CliIO): Promise<number> {
  let items: KubeObject[];
  try {
    items = (await own.list("v1", "Secret", { namespace, labelSelector: CLUSTER_SELECTOR })).items;
  } catch (err) {
    if (err instanceof KubeApiError && err.status === 403)
      throw new UsageError(`not allowed to list the cluster Secrets in ${namespace}: ${err.message}`);
    throw err;
  }
  const rows = [...entriesOf(items).values()].map((e) =>
    "error" in e
      ? { name: e.name, server: "", secret: e.secret, status: `invalid: ${e.error}` }
      : {
          name: e.name,
          server: e.server,
          secret: e.secret,
          auth: e.selection.user.exec
            ? "exec"
            : e.selection.user.token
              ? "token"
              : e.selection.user.certData
                ? "client certificate"
                : "none",
          status: "ok",
        },
  );
  const format = structured(values.output as string | undefined);
  if (format) {
    printStructured(io, format, rows);
    return EXIT.ok;
  }
  if (rows.length === 0) io.out(`no clusters registered in ${namespace} (syncward cluster add CONTEXT)`);
  for (const r of rows) io.out(`${r.name}\t${r.server}\t${"auth" in r ? r.auth : ""}\t${r.status}`);
  return EXIT.ok;
}
