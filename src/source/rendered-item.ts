import type { KubeObject } from "../kube/object.ts";

/** One rendered object and where it comes from (repository-relative file, 1-based line). */
export interface RenderedItem {
  object: KubeObject;
  file: string;
  line: number;
}
