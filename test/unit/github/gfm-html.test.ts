// Every situation a check run or reply reports, rendered to HTML as GitHub renders Markdown
// (`marked` with GFM behind GitHub's sanitizer, as the screenshots in docs/images are drawn): no
// table row falls out of its table, no emphasis or link is left as literal marks, no raw tag
// reaches the page, and every commit SHA a reader sees is a link to it.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { DROPPED, gfmToHtml } from "../../../tools/gfm-html.ts";
import { pageHtml } from "../../../tools/screenshot-page.ts";
import { allSituations } from "../../support/check-run-situations.ts";

const SHA = /(?<![0-9A-Za-z])(?=[0-9a-f]*[a-f])[0-9a-f]{7,40}(?![0-9A-Za-z])/g;

function decode(text: string): string {
  return text
    .replace(/&lt;/g, "<")
    .replace(/&gt;/g, ">")
    .replace(/&quot;/g, '"')
    .replace(/&amp;/g, "&");
}

/** What a reader sees: the text without tags, entities decoded. */
function visible(html: string): string {
  return decode(html.replace(/<[^>]+>/g, " "));
}

/** Commit SHAs shown as text but not as the label of a link to that commit. */
function unlinkedShas(html: string): string[] {
  const withoutCommitLinks = html.replace(
    /<a href="[^"]*\/commit\/([0-9a-f]{40})">(?:<code>)?([0-9a-f]{7,40})(?:<\/code>)?<\/a>/g,
    (whole, full: string, label: string) => (full.startsWith(label) ? " " : whole),
  );
  return [...visible(withoutCommitLinks).matchAll(SHA)].map((m) => m[0]);
}

/** Table rows in the Markdown, outside code fences (delimiter rows not counted). */
function markdownRows(markdown: string): number {
  let fence = false;
  let rows = 0;
  for (const line of markdown.split("\n")) {
    if (/^\s*(```|~~~)/.test(line)) fence = !fence;
    else if (!fence && line.startsWith("|") && !/^\|( *:?-{3,}:? *\|)+$/.test(line.trim())) rows++;
  }
  return rows;
}

describe("gfmToHtml", () => {
  const table: Array<[string, string, string]> = [
    ["a code span holds its text literally", "a `<b>|x` b", "<p>a <code>&lt;b&gt;|x</code> b</p>\n"],
    [
      "a linked code span",
      "[`a1b2c3d`](https://github.com/acme/shop/commit/a1b2c3d)",
      '<p><a href="https://github.com/acme/shop/commit/a1b2c3d"><code>a1b2c3d</code></a></p>\n',
    ],
    ["escapes and entities stay text", "\\*not\\* &lt;b&gt; & \\`", "<p>*not* &lt;b&gt; &amp; `</p>\n"],
    [
      "strong and emphasis",
      "**Next:** _and 3 more_ snake_case",
      "<p><strong>Next:</strong> <em>and 3 more</em> snake_case</p>\n",
    ],
    [
      "an escaped pipe stays in its cell",
      "| A | B |\n| --- | --- |\n| x \\| y | z |",
      "<table>\n<thead>\n<tr>\n<th>A</th>\n<th>B</th>\n</tr>\n</thead>\n<tbody><tr>\n<td>x | y</td>\n<td>z</td>\n</tr>\n</tbody></table>\n",
    ],
    [
      "a row with too many cells loses the extra ones, as on GitHub",
      "| A |\n| --- |\n| x | y |",
      "<table>\n<thead>\n<tr>\n<th>A</th>\n</tr>\n</thead>\n<tbody><tr>\n<td>x</td>\n</tr>\n</tbody></table>\n",
    ],
    ["a fence its body cannot close", "````\n```\n````", "<pre><code>```\n</code></pre>\n"],
    ["line breaks in a comment are kept", "one\ntwo", "<p>one<br>two</p>\n"],
    [
      "raw HTML GitHub would drop is shown as marked text",
      "<script>x</script>",
      `<span class="${DROPPED}">&lt;script&gt;</span>x<span class="${DROPPED}">&lt;/script&gt;</span>`,
    ],
    [
      "a kept tag carrying an attribute GitHub strips is flagged, never passed",
      '<details open onclick="x()"><summary>s</summary>\n\nbody\n\n</details>',
      `<span class="${DROPPED}">&lt;details open onclick=&quot;x()&quot;&gt;</span><summary>s</summary><p>body</p>\n</details>`,
    ],
    [
      "a tag GitHub keeps",
      "<details open><summary>s</summary>\n\n</details>",
      "<details open><summary>s</summary></details>",
    ],
    ["a comment marker is hidden, the heading after it kept", "<!-- m -->\n#### s", "\n<h4>s</h4>\n"],
    [
      "a shortcode is an emoji, not in code",
      "a :warning: `:warning:`",
      "<p>a ⚠️ <code>:warning:</code></p>\n",
    ],
  ];
  for (const [name, markdown, html] of table) it(name, () => assert.equal(gfmToHtml(markdown), html));
});

describe("every situation as GitHub renders it", () => {
  for (const s of allSituations()) {
    it(`${s.name} (${s.kind})`, () => {
      const html = gfmToHtml(s.markdown);
      assert.equal(
        (html.match(/<tr>/g) ?? []).length,
        markdownRows(s.markdown),
        "every table row of the Markdown is a row of a table",
      );
      assert.doesNotMatch(html, /<p>\|/, "no row left as a paragraph");
      assert.deepEqual(unlinkedShas(html), [], "every commit shown is a link to it");
      const text = visible(html.replace(/<code>[\s\S]*?<\/code>/g, " "));
      assert.doesNotMatch(text, /\*\*|\]\(https?:/, "no emphasis or link left as literal marks");
      assert.ok(!html.includes(DROPPED), "no user text reached the Markdown as a raw tag");
      assert.match(pageHtml(s), /<article class="markdown-body">/);
    });
  }

  it("the check fails on an unlinked SHA, a raw tag and a row that broke out of its table", () => {
    assert.deepEqual(unlinkedShas(gfmToHtml("runs `a1b2c3d`")), ["a1b2c3d"]);
    assert.ok(gfmToHtml("title <img src=x onerror=alert(1)>").includes(DROPPED));
    const broken = "| A | B |\n| --- | --- |\n| x | y |\n\n| z | w |";
    assert.notEqual((gfmToHtml(broken).match(/<tr>/g) ?? []).length, markdownRows(broken));
  });
});
