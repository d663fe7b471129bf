// Globs of the projects document: `*` any run, `?` one character; repository names compare
// without case (GitHub's do), namespaces and contexts exactly.
import { globMatch } from "../engine/diff/glob.ts";

export function repoGlobMatch(pattern: string, fullName: string): boolean {
  return globMatch(pattern.toLowerCase(), fullName.toLowerCase());
}

/**
 * Argo CD's destination namespaces: allowed when some plain pattern matches and no `!pattern`
 * does. Returns the pattern that decided, for messages.
 */
export function namespaceAllowed(
  patterns: readonly string[],
  namespace: string,
): { allowed: true; by: string } | { allowed: false; by?: string } {
  const denied = patterns.find((p) => p.startsWith("!") && globMatch(p.slice(1), namespace));
  if (denied) return { allowed: false, by: denied };
  const allowed = patterns.find((p) => !p.startsWith("!") && globMatch(p, namespace));
  return allowed ? { allowed: true, by: allowed } : { allowed: false };
}

export { globMatch };
