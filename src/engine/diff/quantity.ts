// Kubernetes resource quantities ("500m", "1Gi", "1e3"), compared exactly as rationals so that the
// API server's canonical form ("0.5" becomes "500m") is not reported as drift.

interface Rational {
  num: bigint;
  den: bigint;
}

const DECIMAL_SUFFIX: Record<string, number> = {
  n: -9,
  u: -6,
  m: -3,
  "": 0,
  k: 3,
  M: 6,
  G: 9,
  T: 12,
  P: 15,
  E: 18,
};
const BINARY_SUFFIX: Record<string, number> = { Ki: 10, Mi: 20, Gi: 30, Ti: 40, Pi: 50, Ei: 60 };

const QUANTITY = /^([+-]?)(\d+\.?\d*|\.\d+)(?:(Ki|Mi|Gi|Ti|Pi|Ei|[numkMGTPE])|[eE]([+-]?\d+))?$/;

/** Parses a quantity (string or number) into an exact rational; undefined when it is not one. */
export function parseQuantity(value: unknown): Rational | undefined {
  let text: string;
  if (typeof value === "number") {
    if (!Number.isFinite(value)) return undefined;
    // JavaScript writes 1e21 and 1e-7 in exponent form, which the grammar below accepts.
    text = String(value);
  } else if (typeof value === "string") {
    text = value.trim();
  } else {
    return undefined;
  }
  const m = QUANTITY.exec(text);
  if (!m) return undefined;
  const [, sign = "", digits = "0", suffix, exponent] = m;
  const dot = digits.indexOf(".");
  const intPart = dot < 0 ? digits : digits.slice(0, dot);
  const fracPart = dot < 0 ? "" : digits.slice(dot + 1);
  let num = BigInt(`${intPart || "0"}${fracPart}`);
  let decimalExp = -fracPart.length;
  if (sign === "-") num = -num;
  if (exponent !== undefined) decimalExp += Number(exponent);
  else if (suffix !== undefined && suffix in BINARY_SUFFIX) num <<= BigInt(BINARY_SUFFIX[suffix] ?? 0);
  else decimalExp += DECIMAL_SUFFIX[suffix ?? ""] ?? 0;
  if (Math.abs(decimalExp) > 400) return undefined;
  return decimalExp >= 0
    ? { num: num * 10n ** BigInt(decimalExp), den: 1n }
    : { num, den: 10n ** BigInt(-decimalExp) };
}

/** True when both values are quantities of the same amount (`"0.5"` and `"500m"`, `1` and `"1"`). */
export function quantitiesEqual(a: unknown, b: unknown): boolean {
  const x = parseQuantity(a);
  const y = parseQuantity(b);
  if (!x || !y) return false;
  return x.num * y.den === y.num * x.den;
}
