// One byte budget for a check run's summary or text (GitHub: 65,535 bytes each) that every part
// is fitted into, most important first. A part that does not fit whole gives way to a shorter
// version of itself or to a one-line pointer to the rest (`syncward app diff`, `/history`), whose
// room is reserved before any part is placed, so a pointer is never what gets cut.
import { byteLength, truncateBytes } from "./truncate.ts";

export interface Part {
  /** Where it goes in the document (ascending); parts are placed by their order in the list. */
  order: number;
  /** The whole part ("" when absent). */
  text: string;
  /** Always kept (cut only when the required parts alone exceed the budget). */
  required?: boolean;
  /** A version of at most `room` bytes that says what it left out, or undefined. */
  shrink?: (room: number) => string | undefined;
  /** What stands in when neither the part nor a shrunk version fits. */
  pointer?: string;
}

const SEP = "\n\n";
const SEP_BYTES = byteLength(SEP);

/**
 * The parts joined in document order within `maxBytes`. `parts` lists them by priority: required
 * ones are always placed, optional ones in turn get the room left.
 */
export function fitParts(parts: Part[], maxBytes: number): string {
  const present = parts.filter((p) => p.text !== "");
  const cost = (s: string) => (s === "" ? 0 : byteLength(s) + SEP_BYTES);
  const required = present.filter((p) => p.required);
  const optional = present.filter((p) => !p.required);
  const chosen = new Map<Part, string>(required.map((p) => [p, p.text]));
  let left = maxBytes + SEP_BYTES - required.reduce((n, p) => n + cost(p.text), 0);
  if (left < 0) return fitRequired(required, maxBytes);
  let reserve = optional.reduce((n, p) => n + cost(p.pointer ?? ""), 0);
  for (const part of optional) {
    const pointer = part.pointer ?? "";
    reserve -= cost(pointer);
    const room = left - reserve;
    let text = "";
    if (cost(part.text) <= room) text = part.text;
    else {
      const shrunk = room > SEP_BYTES ? part.shrink?.(room - SEP_BYTES) : undefined;
      if (shrunk !== undefined && shrunk !== "" && cost(shrunk) <= room) text = shrunk;
      else if (cost(pointer) <= room) text = pointer;
    }
    left -= cost(text);
    if (text !== "") chosen.set(part, text);
  }
  return join(present.filter((p) => chosen.has(p)).map((p) => [p.order, chosen.get(p)!] as const));
}

function join(parts: ReadonlyArray<readonly [number, string]>): string {
  return [...parts]
    .sort((a, b) => a[0] - b[0])
    .map(([, t]) => t)
    .join(SEP);
}

/** Required parts alone too long: the last one (totals, next step) kept, the rest cut before it. */
function fitRequired(required: Part[], maxBytes: number): string {
  const ordered = [...required].sort((a, b) => a.order - b.order);
  const tail = ordered.at(-1)?.text ?? "";
  const body = join(ordered.slice(0, -1).map((p) => [p.order, p.text] as const));
  return fitMarkdown(body === "" ? tail : `${body}${SEP}${tail}`, maxBytes, tail);
}

/**
 * Rows of a table (or list) that fit `room` bytes with its header, then `more(n)` for the `n`
 * rows left out; undefined when not even one row fits.
 */
export function fitRows(
  header: string[],
  rows: string[],
  room: number,
  more: (left: number) => string,
): string | undefined {
  let used = byteLength(header.join("\n"));
  const kept: string[] = [];
  for (const [i, row] of rows.entries()) {
    const tail = i + 1 < rows.length ? byteLength(`\n\n${more(rows.length - i - 1)}`) : 0;
    if (used + byteLength(row) + 1 + tail > room) break;
    kept.push(row);
    used += byteLength(row) + 1;
  }
  if (kept.length === 0) return undefined;
  const left = rows.length - kept.length;
  return [...header, ...kept, ...(left > 0 ? ["", more(left)] : [])].join("\n");
}

/**
 * `markdown` cut to `maxBytes` keeping `tail` visible: a code fence or `<details>` left open by
 * the cut is closed before the tail, so the tail is neither rendered as code nor folded away.
 */
export function fitMarkdown(markdown: string, maxBytes: number, tail: string): string {
  if (byteLength(markdown) <= maxBytes) return markdown;
  const body =
    tail !== "" && markdown.endsWith(tail) ? markdown.slice(0, markdown.length - tail.length) : markdown;
  const gap = tail === "" ? "" : "\n";
  let reserve = 0;
  for (let attempt = 0; attempt < 3; attempt++) {
    const cut = truncateBytes(body, Math.max(0, maxBytes - byteLength(tail) - byteLength(gap) - reserve));
    const closers = closersFor(cut);
    const out = `${cut}${closers}${gap}${tail}`;
    if (byteLength(out) <= maxBytes) return out;
    reserve = byteLength(closers);
  }
  return truncateBytes(markdown, maxBytes, tail);
}

/** What closes the code fence and `<details>` blocks left open at the end of `markdown`. */
export function closersFor(markdown: string): string {
  let fence: string | undefined;
  let details = 0;
  for (const line of markdown.split("\n")) {
    const trimmed = line.trim();
    if (fence !== undefined) {
      if (trimmed.startsWith(fence[0]!) && /^(`+|~+)$/.test(trimmed) && trimmed.length >= fence.length)
        fence = undefined;
      continue;
    }
    const open = /^(`{3,}|~{3,})/.exec(trimmed);
    if (open !== null) fence = open[1];
    else if (trimmed.startsWith("<details>")) details++;
    else if (trimmed.startsWith("</details>")) details = Math.max(0, details - 1);
  }
  return `${fence === undefined ? "" : `\n${fence}`}${"\n\n</details>".repeat(details)}\n`;
}
