// What a heal or sync reverted, as a responder reads it in history and on the check run: each
// path with the manager and operation that made the change, when, and the live value it had,
// masked where it is a Secret's data or an environment variable's value.
import type { KubeObject } from "../../kube/object.ts";
import { fieldManagersOf } from "../diff/field-managers-of.ts";
import { type CompareOptions, compareObjects, type Difference } from "../diff/index.ts";
import { parsePointer, resolveTokens } from "../diff/json-pointer.ts";
import { isSecret } from "../diff/normalize.ts";
import { isSecurityField } from "../diff/security-fields.ts";
import { OWN_MANAGER, ownNameClaim } from "../diff/trusted-managers.ts";
import { securityReason } from "./security.ts";

export interface RevertedChange {
  /** `apps/Deployment:shop/web` */
  object: string;
  /** JSON pointer in the live object before the revert. */
  path: string;
  /** changed (a value Git declares), added (something Git does not declare), missing, extra. */
  kind: string;
  /** The field manager that made the change (`kubectl-patch`), when managedFields tell. */
  manager?: string;
  /** `Update`, `Apply`; with the subresource when there was one (`Update scale`). */
  operation?: string;
  /** When that manager last wrote the object. */
  at?: string;
  /** The reverted live value, compact, masked where secret. */
  value?: string;
  /** The manager is trusted (a drift fight, healed with backoff) rather than untrusted (reverted at once). */
  trusted: boolean;
  /** Why it matters for security: `new container, image evil:1`, `privileged`, `hostPath volume`... */
  security?: string;
  /** A trusted manager's name (or syncward's own) claimed a change its pairs do not cover: a spoofing attempt. */
  spoofing?: string;
}

const MASK = "********";
const MAX_VALUE = 200;

function maskEnv(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(maskEnv);
  if (value !== null && typeof value === "object") {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value))
      out[k] = k === "value" ? MASK : k === "env" ? maskEnv(v) : maskDeep(k, v);
    return out;
  }
  return value;
}

/** Env values anywhere inside (an added container carries its env): masked. */
function maskDeep(key: string, value: unknown): unknown {
  if (key === "env") return maskEnv(value);
  if (Array.isArray(value)) return value.map((v) => maskDeep("", v));
  if (value !== null && typeof value === "object")
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, maskDeep(k, v)]));
  return value;
}

export function maskedValue(object: KubeObject, pointer: string, value: unknown): string | undefined {
  if (value === undefined) return undefined;
  const secret = isSecret(object) && /^\/(data|stringData)(\/|$)/.test(pointer);
  const inEnv = /\/env(\/|$)/.test(pointer);
  const shown = secret
    ? MASK
    : inEnv
      ? /\/value$/.test(pointer)
        ? MASK
        : maskEnv(value)
      : maskDeep("", value);
  const text = typeof shown === "string" ? shown : JSON.stringify(shown);
  return text.length > MAX_VALUE ? `${text.slice(0, MAX_VALUE - 1)}…` : text;
}

/**
 * A security-relevant value under syncward's own name that differs from `desired`, the render
 * syncward deployed: someone else wrote under its name (or admission rewrote syncward's write).
 */
function ownNameSpoofing(d: Difference, live: KubeObject): string | undefined {
  if (d.kind === "missing") return undefined;
  const tokens = parsePointer(d.path);
  if (!isSecurityField(resolveTokens(live, tokens) ?? tokens, live.kind ?? "")) return undefined;
  const own =
    (d.owners ?? []).some((o) => o.manager === OWN_MANAGER) ||
    (d.kind === "changed" && fieldManagersOf(live, d.path).includes(OWN_MANAGER));
  return own ? ownNameClaim(d.path) : undefined;
}

/**
 * Every difference of `live` from `desired` (the deployed render: this is a heal's trail), with
 * who made it. A change under syncward's own name counts as trusted for backing off (admission
 * rewriting syncward's writes must not make it fight without pause) but is flagged as spoofing.
 */
export function revertTrail(
  key: string,
  desired: KubeObject,
  live: KubeObject,
  options: CompareOptions,
): RevertedChange[] {
  return compareObjects(desired, live, options).differences.map((d) => {
    const owners = d.owners ?? [];
    const owner = owners.find((o) => !o.trusted) ?? owners[0];
    const spoofing = d.spoofed ?? ownNameSpoofing(d, live);
    const security = d.kind === "missing" ? undefined : securityReason(d.path, d.kind, d.live);
    const value = d.kind === "missing" ? undefined : maskedValue(live, d.path, d.live);
    return {
      object: key,
      path: d.path,
      kind: d.kind,
      ...(owner
        ? {
            manager: owner.manager,
            operation: owner.subresource ? `${owner.operation} ${owner.subresource}` : owner.operation,
            ...(owner.time ? { at: owner.time } : {}),
          }
        : {}),
      ...(value !== undefined ? { value } : {}),
      trusted: owners.every((o) => o.trusted || o.manager === OWN_MANAGER),
      ...(security ? { security } : {}),
      ...(spoofing ? { spoofing } : {}),
    };
  });
}
