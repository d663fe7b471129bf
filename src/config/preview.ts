// A pull request's preview as an environment: the template's source environment with the PR's head
// branch, the preview's own namespace, prune and self-heal on and nothing the source had that
// reaches beyond that namespace. Pure: the runtime decides who gets one and where it may run.
import type { EnvironmentConfig, PreviewTemplate } from "./types.ts";

/** What of a pull request a template's placeholders name. */
export interface PreviewPull {
  number: number;
  /** The head branch (in the repository itself: fork pull requests never get a preview). */
  branch: string;
  sha: string;
}

/** `pr-12-dev`: the preview's environment name, also its GitHub deployment environment. */
export function previewName(number: number, from: string): string {
  return `pr-${number}-${from}`;
}

/** A branch as a DNS label part: lowercase, runs of other characters as one "-", at most `max`. */
export function dnsSafeBranch(branch: string, max: number): string {
  const safe = branch
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, "-")
    .replace(/^-+|-+$/g, "");
  const cut = safe.slice(0, Math.max(1, max)).replace(/-+$/, "");
  return cut || "pr";
}

/** The template's text with the pull request's values; {branch} cut so a namespace stays within 63. */
export function expandPreviewText(
  template: string,
  pr: PreviewPull,
  limit = Number.POSITIVE_INFINITY,
): string {
  const fixed = template
    .replaceAll("{number}", String(pr.number))
    .replaceAll("{sha7}", pr.sha.slice(0, 7).toLowerCase());
  const branches = fixed.split("{branch}").length - 1;
  if (branches === 0) return fixed;
  const room = Math.floor((limit - (fixed.length - branches * "{branch}".length)) / branches);
  return fixed.replaceAll("{branch}", dnsSafeBranch(pr.branch, Math.min(room, 63)));
}

/**
 * The environment a preview syncs. It keeps the source's render (path, Helm settings), drift rules,
 * windows, hooks and signed-commit rule; it drops what would reach past its namespace (the
 * source's other namespaces, cluster-scoped kinds), its gate and notifications, and previews of
 * its own.
 */
export function previewEnvironmentOf(
  template: PreviewTemplate,
  from: EnvironmentConfig,
  pr: PreviewPull,
  /**
   * The namespace the preview was given when it started (its record's): a preview stays there
   * whatever its head is now, though a template with {sha7} would name another for the new head.
   */
  namespace = expandPreviewText(template.namespace, pr, 63),
): EnvironmentConfig {
  const { approval: _gate, requireChecks: _checks, configRevision: _read, ...rest } = from;
  return {
    ...rest,
    name: previewName(pr.number, from.name),
    source: { ...from.source, branch: pr.branch },
    destination: { ...from.destination, namespace },
    syncPolicy: {
      ...from.syncPolicy,
      automated: { prune: true, selfHeal: true, allowEmpty: false },
      // The preview's namespace is its own: the preview manager creates it, with the operator's
      // quota and limits, and records its uid for the teardown. The sync never creates it: a
      // namespace it made after a teardown (by another replica, say) or after someone deleted it
      // would have no guards and no record, and nothing would ever delete it.
      syncOptions: { ...from.syncPolicy.syncOptions, CreateNamespace: false },
    },
    policy: { ...from.policy, namespaces: [namespace], clusterResources: [] },
    production: false,
    previews: false,
    notify: [],
    ...(template.url ? { environmentUrl: expandPreviewText(template.url, pr) } : {}),
  };
}
