/**
 * Every relative link in the README, the changelog and docs/ leads somewhere: the file (or
 * directory) exists, relative to the page that links it, and a `#fragment` names a heading of the
 * page it points into, by GitHub's rule for heading anchors, or an explicit `<a id>` there.
 */
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const PAGES = [
  'README.md',
  'CHANGELOG.md',
  ...readdirSync(join(ROOT, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .map((f) => `docs/${f}`),
];

/** The text of a page outside fenced code blocks and inline code, where links are links. */
function prose(markdown: string): string {
  return markdown.replace(/^(```|~~~)[^\n]*\n[\s\S]*?^\1[^\n]*$/gm, '').replace(/`[^`\n]*`/g, '');
}

/**
 * GitHub's anchor for a heading (github-slugger): lower case, every character but letters,
 * digits, marks, spaces, `_` and `-` removed, each space a `-`; a repeated one gets `-1`, `-2`…
 */
function anchorsOf(markdown: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  const withoutFences = markdown.replace(/^(```|~~~)[^\n]*\n[\s\S]*?^\1[^\n]*$/gm, '');
  for (const [, text = ''] of withoutFences.matchAll(/^#{1,6}[ \t]+(.+?)[ \t]*#*$/gm)) {
    // A link in a heading shows its text.
    const shown = text.replace(/\[([^\]]*)\]\([^)]*\)/g, '$1');
    const base = shown
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\p{M}\s_-]/gu, '')
      .replace(/\s/g, '-');
    const count = seen.get(base) ?? 0;
    seen.set(base, count + 1);
    anchors.add(count === 0 ? base : `${base}-${String(count)}`);
  }
  for (const [, id = ''] of markdown.matchAll(/<a\s+(?:id|name)="([^"]+)"/g)) anchors.add(id);
  return anchors;
}

/** `[text](target)` and `[text](target "title")` links that are not absolute URLs. */
function relativeLinks(markdown: string): string[] {
  return [...prose(markdown).matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)]
    .map((m) => m[1] ?? '')
    .filter((target) => !/^[a-z][a-z0-9+.-]*:/i.test(target));
}

test('every relative link in README.md, CHANGELOG.md and docs/*.md resolves, #anchors included', () => {
  const broken: string[] = [];
  let checked = 0;
  for (const page of PAGES) {
    const text = readFileSync(join(ROOT, page), 'utf8');
    for (const link of relativeLinks(text)) {
      checked++;
      const [path = '', fragment] = link.split('#', 2);
      const target = path === '' ? join(ROOT, page) : join(ROOT, dirname(page), decodeURIComponent(path));
      if (!existsSync(target)) {
        broken.push(`${page}: ${link} (no ${relative(ROOT, target)})`);
        continue;
      }
      if (fragment === undefined || fragment === '' || statSync(target).isDirectory() || !target.endsWith('.md')) continue;
      if (!anchorsOf(readFileSync(target, 'utf8')).has(decodeURIComponent(fragment)))
        broken.push(`${page}: ${link} (no heading with that anchor in ${relative(ROOT, target)})`);
    }
  }
  assert.ok(checked > 50, `only ${String(checked)} links found: the pattern is off`);
  assert.deepEqual(broken, []);
});

test('the anchor rule is GitHub’s', () => {
  const page =
    '# Hit ratio: admission in front of the LRU (`--hit-ratio`, 2026-11-25)\n## HTTP/2 hits\n## Reload (SIGHUP)\n## Reload (SIGHUP)\n```\n# not a heading\n```\n';
  assert.deepEqual([...anchorsOf(page)], ['hit-ratio-admission-in-front-of-the-lru---hit-ratio-2026-11-25', 'http2-hits', 'reload-sighup', 'reload-sighup-1']);
});
