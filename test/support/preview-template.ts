// A preview template as the config loads one (trigger label `preview`, write permission), with `fields` changed.
import type { PreviewTemplate } from "../../src/config/types.ts";

export const previewTemplate = (fields: Partial<PreviewTemplate> = {}): PreviewTemplate => ({
  from: "dev",
  namespace: "p-{number}",
  trigger: "label",
  label: "preview",
  ttl: 3_600_000,
  permission: "write",
  ...fields,
});
