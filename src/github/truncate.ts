// Byte-exact truncation for GitHub's size limits. Check-run `output.summary` and `output.text`
// are capped at 65535 *bytes* (UTF-8), not characters: a string that fits by `.length` can still
// be rejected when it holds emoji or CJK text. The end of a long report (totals, errors) is what a
// person needs most, so the caller can pass a tail that always survives.

const encoder = new TextEncoder();

/** UTF-8 size of a string, in bytes. */
export function byteLength(text: string): number {
  return encoder.encode(text).length;
}

/** The marker that replaces the cut part. */
function marker(cutBytes: number): string {
  return `\n\n… truncated ${cutBytes} bytes …\n`;
}

/**
 * `text` cut so that its UTF-8 encoding is at most `maxBytes` bytes.
 *
 * A text that fits is returned unchanged. Otherwise the result is the longest prefix that fits,
 * then a marker (`… truncated N bytes …`, N counting the bytes of `text` that were dropped), then
 * `keepTail`. The cut never splits a multi-byte character or a surrogate pair.
 *
 * `keepTail` is what must stay visible (totals, errors). Usually it is the end of `text` itself:
 * when `text` ends with `keepTail`, only what comes before it is cut, so the tail appears exactly
 * once whether or not the text was truncated. A tail that does not fit on its own keeps its end.
 */
export function truncateBytes(text: string, maxBytes = 65535, keepTail = ""): string {
  if (!Number.isInteger(maxBytes) || maxBytes < 0)
    throw new RangeError(`maxBytes must be a whole number >= 0, got ${maxBytes}`);
  const total = byteLength(text);
  if (total <= maxBytes) return text;

  const tailInText = keepTail !== "" && text.endsWith(keepTail);
  const body = tailInText ? text.slice(0, text.length - keepTail.length) : text;
  const bodyBytes = byteLength(body);
  const tailBytes = byteLength(keepTail);
  // Markers are sized for the worst case (nothing kept); the real count can only be smaller, so
  // the real marker is never longer than the one budgeted for.
  const worstMarkerBytes = byteLength(marker(bodyBytes));
  if (worstMarkerBytes + tailBytes <= maxBytes) {
    const head = prefixByBytes(body, maxBytes - worstMarkerBytes - tailBytes);
    return head + marker(bodyBytes - byteLength(head)) + keepTail;
  }

  // Not even the marker and the whole tail fit: keep the end of the tail only.
  const worstTailMarkerBytes = byteLength(marker(bodyBytes + (tailInText ? tailBytes : 0)));
  if (worstTailMarkerBytes >= maxBytes) return prefixByBytes(text, maxBytes);
  const tail = suffixByBytes(keepTail, maxBytes - worstTailMarkerBytes);
  const dropped = bodyBytes + (tailInText ? tailBytes - byteLength(tail) : 0);
  return marker(dropped).slice(2) + tail;
}

/** UTF-8 size of the code point starting at `text[i]`, and how many UTF-16 units it takes. */
function codePointAt(text: string, i: number): { bytes: number; units: number } {
  const c = text.charCodeAt(i);
  if (c < 0x80) return { bytes: 1, units: 1 };
  if (c < 0x800) return { bytes: 2, units: 1 };
  if (c >= 0xd800 && c <= 0xdbff) {
    const next = text.charCodeAt(i + 1);
    if (next >= 0xdc00 && next <= 0xdfff) return { bytes: 4, units: 2 };
  }
  // BMP characters and lone surrogates (which encode as U+FFFD, also 3 bytes).
  return { bytes: 3, units: 1 };
}

/** The longest prefix of `text` whose UTF-8 encoding fits in `budget` bytes. */
export function prefixByBytes(text: string, budget: number): string {
  let bytes = 0;
  let i = 0;
  while (i < text.length) {
    const cp = codePointAt(text, i);
    if (bytes + cp.bytes > budget) break;
    bytes += cp.bytes;
    i += cp.units;
  }
  return text.slice(0, i);
}

/** The longest suffix of `text` whose UTF-8 encoding fits in `budget` bytes. */
export function suffixByBytes(text: string, budget: number): string {
  // Walk forward to know where each code point starts, then drop from the front.
  const starts: number[] = [];
  const sizes: number[] = [];
  for (let i = 0; i < text.length; ) {
    const cp = codePointAt(text, i);
    starts.push(i);
    sizes.push(cp.bytes);
    i += cp.units;
  }
  let bytes = 0;
  let k = sizes.length;
  while (k > 0 && bytes + sizes[k - 1]! <= budget) {
    bytes += sizes[k - 1]!;
    k--;
  }
  return k === sizes.length ? "" : text.slice(starts[k]);
}
