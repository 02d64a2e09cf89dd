// The Netlify recipe's rule files: exactly what the delivery policy renders, and what they say agrees with the
// registry (the recipe itself runs in `netlify dev` in test/host-netlify.test.ts).
import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { TRACKED_ASSETS } from '../schemas/common.ts';
import { ALLOWED_REQUEST_HEADERS, EXPOSED_HEADERS, WORKER_PATHS } from '../schemas/delivery.ts';
import { FREE_RESOURCES, PAID_RESOURCES } from '../schemas/resources.ts';
import { renderNetlifyHeaders, renderNetlifyRedirects } from '../deploy/netlify/render.ts';

const read = (file: string) => readFile(new URL(`../deploy/${file}`, import.meta.url), 'utf8');
const rulesOf = (text: string) =>
  text
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line && !line.startsWith('#'))
    .map((line) => line.split(/\s+/));

/** `_headers`: path line, then indented "Name: value" lines. */
function headerBlocks(text: string): Map<string, Record<string, string>> {
  const blocks = new Map<string, Record<string, string>>();
  let current: Record<string, string> | null = null;
  for (const line of text.split('\n')) {
    if (!line.trim() || line.startsWith('#')) continue;
    if (!/^\s/.test(line)) blocks.set(line.trim(), (current = {}));
    else if (current) {
      const [name, ...value] = line.trim().split(':');
      current[(name ?? '').toLowerCase()] = value.join(':').trim();
    }
  }
  return blocks;
}

describe('Netlify recipe', () => {
  it('commits exactly what the delivery policy renders', async () => {
    expect(await read('netlify/_headers')).toBe(renderNetlifyHeaders());
    expect(await read('netlify/_redirects')).toBe(renderNetlifyRedirects());
  });

  it('forces query rules for each tracked asset (upper and lower case), then the JSON 400 function for any other value', async () => {
    const rules = rulesOf(await read('netlify/_redirects'));
    const reasoning = rules.filter(([from]) => from === '/api/reasoning.php');
    expect(reasoning.slice(0, TRACKED_ASSETS.length * 2)).toEqual(
      TRACKED_ASSETS.flatMap((asset) =>
        [asset, asset.toLowerCase()].map((spelling) => [
          '/api/reasoning.php',
          `asset=${spelling}`,
          `/api/reasoning/${asset}.json`,
          '200!',
        ]),
      ),
    );
    expect(reasoning.at(-1)).toEqual([
      '/api/reasoning.php',
      'asset=:other',
      '/.netlify/functions/invalid-asset',
      '200!',
    ]);
  });

  it('proxies exactly the paid paths to the paywall and shadows no free file', async () => {
    const rules = rulesOf(await read('netlify/_redirects'));
    const proxied = rules.filter(([, to]) => to?.startsWith('PAYWALL_ORIGIN'));
    expect(proxied).toEqual([
      ['/p/*', 'PAYWALL_ORIGIN/p/:splat', '200!'],
      ...WORKER_PATHS.map((path) => [path, `PAYWALL_ORIGIN${path}`, '200!']),
    ]);
    const forced = rules.filter((rule) => rule.at(-1)?.endsWith('!')).map(([from]) => from);
    for (const resource of FREE_RESOURCES.filter((r) => r.id !== 'reasoning'))
      expect(forced).not.toContain(resource.path);
  });

  it('sends JSON content type, CORS and the revalidation cache hint for every free file, and none on paid paths', async () => {
    for (const file of ['netlify/_headers']) {
      const blocks = headerBlocks(await read(file));
      expect(blocks.get('/*')).toMatchObject({
        'access-control-allow-origin': '*',
        'access-control-allow-headers': ALLOWED_REQUEST_HEADERS,
        'access-control-expose-headers': EXPOSED_HEADERS,
      });
      const freePaths = [...FREE_RESOURCES.map((r) => r.path), '/api/reasoning/*'];
      for (const path of freePaths) {
        expect(blocks.get(path), `${file} ${path}`).toEqual({
          'content-type': 'application/json; charset=utf-8',
          // No rule knows a file's age: revalidated at every use (schemas/delivery.ts freeCacheFor).
          'cache-control': 'no-cache',
        });
      }
      // No rule that sets a cache header may match a paid path: a CDN must never keep a paid body.
      for (const [pattern, headers] of blocks) {
        if (!('cache-control' in headers)) continue;
        const matcher = new RegExp(`^${pattern.replace(/[.]/g, '\\.').replace(/\*/g, '.*')}$`);
        for (const paid of PAID_RESOURCES) expect(matcher.test(paid.path), `${file} ${pattern}`).toBe(false);
      }
    }
  });
});
