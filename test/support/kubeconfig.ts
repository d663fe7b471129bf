// Kubeconfig files for tests that must not (or cannot) reach the test cluster.
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

/** A kubeconfig whose server (127.0.0.1:9, the discard port) never answers. */
export function unreachableKubeconfig(): string {
  const file = join(mkdtempSync(join(tmpdir(), "syncward-kc-")), "kubeconfig");
  writeFileSync(
    file,
    "apiVersion: v1\nkind: Config\nclusters: [{name: c, cluster: {server: 'https://127.0.0.1:9'}}]\nusers: [{name: u, user: {token: t}}]\ncontexts: [{name: c, context: {cluster: c, user: u}}]\ncurrent-context: c\n",
  );
  return file;
}
