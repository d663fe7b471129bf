// The API server sometimes quotes what it was sent: `.stringData.pin: expected string, got
// &value.valueUnstructured{Value:987654321}`, or an admission webhook repeats a field. When what
// it was sent is a Secret, its values are masked in the message before it goes anywhere (results,
// check runs, history, logs).

const MASK = "********";
/** Shorter values are not masked: "1" or "yes" would mangle the message and protect nothing. */
const MIN_LENGTH = 4;
const BASE64 = /^[A-Za-z0-9+/]+={0,2}$/;

function isSecretBody(body: unknown): body is Record<string, unknown> {
  if (typeof body !== "object" || body === null) return false;
  const o = body as { kind?: unknown; apiVersion?: unknown };
  return o.kind === "Secret" && o.apiVersion === "v1";
}

/** Every text form a value of `data` or `stringData` can take in a message. */
function formsOf(value: unknown, base64: boolean): string[] {
  const forms =
    typeof value === "string" ? [value, JSON.stringify(value)] : [String(value), JSON.stringify(value)];
  if (base64 && typeof value === "string" && BASE64.test(value)) {
    const decoded = Buffer.from(value, "base64").toString("utf8");
    forms.push(decoded, JSON.stringify(decoded));
  }
  return forms;
}

/** `message` with every value of the Secret `body` masked; any other body leaves it unchanged. */
export function scrubSecretValues(message: string, body: unknown): string {
  if (!isSecretBody(body)) return message;
  const forms = new Set<string>();
  for (const [field, base64] of [
    ["data", true],
    ["stringData", false],
  ] as const) {
    const map = body[field];
    if (typeof map !== "object" || map === null) continue;
    for (const value of Object.values(map)) for (const f of formsOf(value, base64)) forms.add(f);
  }
  let out = message;
  for (const form of [...forms].filter((f) => f.length >= MIN_LENGTH).sort((a, b) => b.length - a.length)) {
    out = out.split(form).join(MASK);
  }
  return out;
}
