// A line diff (Myers' O(ND) algorithm) and its unified rendering, as diff -u and kubectl diff print.
// Myers keeps one snapshot per edit round, so memory grows with the square of the edit distance
// (10,000 changed lines took 1.2 GB): the search stops at a ceiling of edits, and also at a time
// budget, and the diff then says how many lines changed instead of listing them.

/** Lines removed plus lines added past which a diff is not listed (memory stays under ~20 MB). */
export const MAX_DIFF_EDITS = 2000;
/** Wall-clock budget of one line diff. */
export const DIFF_TIMEOUT_MS = 2000;

export interface LineDiffLimits {
  maxEdits?: number;
  timeoutMs?: number;
}

/** The diff went past its ceiling; `changed` counts the lines removed and added. */
export class DiffTooLargeError extends Error {
  constructor(readonly changed: number) {
    super(`diff too large: ${changed} lines changed`);
  }
}

export interface LineEdit {
  op: " " | "-" | "+";
  line: string;
}

/**
 * The shortest edit script turning `a` into `b`, deletions before insertions within a change.
 * Throws DiffTooLargeError past `limits` (default MAX_DIFF_EDITS edits, DIFF_TIMEOUT_MS).
 */
export function diffLines(
  a: readonly string[],
  b: readonly string[],
  limits: LineDiffLimits = {},
): LineEdit[] {
  let start = 0;
  while (start < a.length && start < b.length && a[start] === b[start]) start++;
  let endA = a.length;
  let endB = b.length;
  while (endA > start && endB > start && a[endA - 1] === b[endB - 1]) {
    endA--;
    endB--;
  }
  const edits: LineEdit[] = [];
  for (let i = 0; i < start; i++) edits.push({ op: " ", line: a[i] as string });
  const middleA = a.slice(start, endA);
  const middleB = b.slice(start, endB);
  const middle = myers(
    middleA,
    middleB,
    limits.maxEdits ?? MAX_DIFF_EDITS,
    limits.timeoutMs ?? DIFF_TIMEOUT_MS,
  );
  if (middle === undefined) throw new DiffTooLargeError(changedLines(middleA, middleB));
  for (const edit of middle) edits.push(edit);
  for (let i = endA; i < a.length; i++) edits.push({ op: " ", line: a[i] as string });
  return edits;
}

/**
 * Lines only in `a` plus lines only in `b`, counted as multisets: the edit distance when nothing
 * moved, and a lower bound of it otherwise. Linear time and memory.
 */
function changedLines(a: readonly string[], b: readonly string[]): number {
  const count = new Map<string, number>();
  for (const line of a) count.set(line, (count.get(line) ?? 0) + 1);
  for (const line of b) count.set(line, (count.get(line) ?? 0) - 1);
  let changed = 0;
  for (const n of count.values()) changed += Math.abs(n);
  return changed;
}

/** Undefined when the edit distance passes `maxEdits` or the search passes `timeoutMs`. */
function myers(
  a: readonly string[],
  b: readonly string[],
  maxEdits: number,
  timeoutMs: number,
): LineEdit[] | undefined {
  const n = a.length;
  const m = b.length;
  if (n === 0) return m > maxEdits ? undefined : b.map((line) => ({ op: "+", line }));
  if (m === 0) return n > maxEdits ? undefined : a.map((line) => ({ op: "-", line }));
  // At least |n - m| edits are needed: no search when that alone is past the ceiling.
  if (Math.abs(n - m) > maxEdits) return undefined;
  const deadline = Date.now() + timeoutMs;
  const max = Math.min(n + m, maxEdits);
  const offset = max + 1;
  const v = new Int32Array(2 * max + 3);
  // trace[d] is v (for diagonals -d-1..d+1) as it was before round d.
  const trace: Int32Array[] = [];
  let found = false;
  for (let d = 0; d <= max && !found; d++) {
    if ((d & 63) === 0 && Date.now() > deadline) return undefined;
    trace.push(v.slice(offset - d - 1, offset + d + 2));
    for (let k = -d; k <= d; k += 2) {
      let x =
        k === -d || (k !== d && (v[offset + k - 1] as number) < (v[offset + k + 1] as number))
          ? (v[offset + k + 1] as number)
          : (v[offset + k - 1] as number) + 1;
      let y = x - k;
      while (x < n && y < m && a[x] === b[y]) {
        x++;
        y++;
      }
      v[offset + k] = x;
      if (x >= n && y >= m) {
        found = true;
        break;
      }
    }
  }
  if (!found) return undefined;
  const out: LineEdit[] = [];
  let x = n;
  let y = m;
  for (let d = trace.length - 1; d >= 0; d--) {
    const snap = trace[d] as Int32Array;
    const at = (k: number) => snap[k + d + 1] as number;
    const k = x - y;
    const prevK = k === -d || (k !== d && at(k - 1) < at(k + 1)) ? k + 1 : k - 1;
    const prevX = at(prevK);
    const prevY = prevX - prevK;
    while (x > prevX && y > prevY) {
      out.push({ op: " ", line: a[x - 1] as string });
      x--;
      y--;
    }
    if (d > 0) {
      if (x === prevX) out.push({ op: "+", line: b[prevY] as string });
      else out.push({ op: "-", line: a[prevX] as string });
    }
    x = prevX;
    y = prevY;
  }
  return out.reverse();
}

function toLines(text: string): string[] {
  if (text === "") return [];
  const lines = text.split("\n");
  if (lines[lines.length - 1] === "") lines.pop();
  return lines;
}

function range(start: number, count: number): string {
  // diff -u numbers an empty range by the line before it, and leaves out a count of 1.
  const first = count === 0 ? start - 1 : start;
  return count === 1 ? `${first}` : `${first},${count}`;
}

/**
 * A unified diff of two texts with `context` lines around each change; "" when they are equal.
 * Texts are compared line by line; a missing final newline is not reported. Past the diff's
 * ceiling, the headers and one line `# diff too large: N lines changed` stand for the hunks.
 */
export function unifiedDiff(
  oldText: string,
  newText: string,
  oldName: string,
  newName: string,
  context = 3,
  limits: LineDiffLimits = {},
): string {
  let edits: LineEdit[];
  try {
    edits = diffLines(toLines(oldText), toLines(newText), limits);
  } catch (err) {
    if (!(err instanceof DiffTooLargeError)) throw err;
    return `--- ${oldName}\n+++ ${newName}\n# ${err.message}\n`;
  }
  const changes: number[] = [];
  edits.forEach((edit, i) => {
    if (edit.op !== " ") changes.push(i);
  });
  if (changes.length === 0) return "";
  // Line numbers (1-based) in each text at each edit.
  const oldAt: number[] = [];
  const newAt: number[] = [];
  let o = 1;
  let p = 1;
  for (const edit of edits) {
    oldAt.push(o);
    newAt.push(p);
    if (edit.op !== "+") o++;
    if (edit.op !== "-") p++;
  }
  return `--- ${oldName}\n+++ ${newName}\n${hunks(edits, changes, oldAt, newAt, context)}`;
}

function hunks(
  edits: LineEdit[],
  changes: number[],
  oldAt: number[],
  newAt: number[],
  context: number,
): string {
  let out = "";
  let h = 0;
  while (h < changes.length) {
    const firstChange = changes[h] as number;
    let lastChange = firstChange;
    while (h + 1 < changes.length && (changes[h + 1] as number) - lastChange - 1 <= 2 * context) {
      h++;
      lastChange = changes[h] as number;
    }
    h++;
    const from = Math.max(0, firstChange - context);
    const to = Math.min(edits.length - 1, lastChange + context);
    let oldCount = 0;
    let newCount = 0;
    let body = "";
    for (let i = from; i <= to; i++) {
      const edit = edits[i] as LineEdit;
      if (edit.op !== "+") oldCount++;
      if (edit.op !== "-") newCount++;
      body += `${edit.op}${edit.line}\n`;
    }
    out += `@@ -${range(oldAt[from] as number, oldCount)} +${range(newAt[from] as number, newCount)} @@\n${body}`;
  }
  return out;
}
