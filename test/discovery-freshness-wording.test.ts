// One freshness rule wherever the discovery files state it, the one /docs/freshness/ and the README give: past
// `next_update_due` a response is late (a run may be in progress), and only one more interval later stale. Free
// files are cached for 60 s, so a rule calling every response past its due time stale would have an agent discard
// ordinary cached copies.
import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { buildLlmsTxt } from '../generator/discovery/llms-txt.ts';
import { buildOpenApiDocument } from '../generator/discovery/openapi.ts';

const BASE_URL = 'https://emi.test';
const llms = buildLlmsTxt({ baseUrl: BASE_URL, hasBuyer: true });
const openapi = buildOpenApiDocument({ baseUrl: BASE_URL }) as Record<string, unknown>;

/** Every string in a JSON document, with where it sits. */
function* strings(node: unknown, path = ''): Generator<[string, string]> {
  if (typeof node === 'string') yield [path, node];
  else if (node && typeof node === 'object')
    for (const [key, child] of Object.entries(node)) yield* strings(child, `${path}/${key}`);
}

/** The sentences of a text that call a response past its due time stale. */
const staleSentences = (text: string): string[] =>
  text
    .split(/(?<=[.!?])\s+|\n/)
    .filter((sentence) => /next_update_due/.test(sentence) && /\bstale\b/i.test(sentence));

describe('freshness wording of the discovery files', () => {
  it('starts from the rule /docs/freshness/ states: late past next_update_due, stale one interval later', async () => {
    const page = await readFile('site/docs/freshness.njk', 'utf8');
    expect(page).toMatch(
      /<strong>Late<\/strong>: now is after <code>next_update_due<\/code> by less than one more interval/,
    );
    expect(page).toMatch(
      /<strong>Stale<\/strong>: now is more than one interval past <code>next_update_due<\/code>/,
    );
    expect(page).toContain(
      "lateBy <= 0 ? 'fresh' : lateBy <= interval ? 'late' : 'stale'".replace(/</g, '&lt;'),
    );
  });

  it('llms.txt says late past next_update_due, and stale only one more interval later', () => {
    const sentences = staleSentences(llms);
    expect(sentences.length, 'llms.txt states the rule').toBeGreaterThan(0);
    for (const sentence of sentences) {
      expect(sentence).toMatch(/\blate\b/);
      expect(sentence).toMatch(/one (more )?(update )?interval/);
    }
  });

  it('the OpenAPI document says the same wherever it speaks of next_update_due and staleness', () => {
    const stated = [...strings(openapi)].flatMap(([path, text]) =>
      staleSentences(text).map((sentence) => [path, sentence] as const),
    );
    expect(stated.map(([path]) => path)).toContain('/info/description');
    for (const [path, sentence] of stated) {
      expect(sentence, path).toMatch(/\blate\b/);
      expect(sentence, path).toMatch(/one (more )?(update )?interval/);
    }
  });

  it('keeps "stale" for that one meaning: a paid path too old to sell is described in other words', () => {
    for (const [path, text] of strings(openapi)) {
      if (!/\bstale\b/i.test(text)) continue;
      // A value of the run status's `status` (/status.json: a run that published nothing), also as each unpublished
      // run lists it, is no freshness word.
      if (
        /^\/components\/schemas\/RunStatus\/properties\/(unpublished_runs\/items\/properties\/)?status\/enum\/\d+$/.test(
          path,
        )
      )
        continue;
      // data_stale is the paywall's code and `stale` that status value, each named as a code; any other use is the
      // freshness rule above.
      const loose = text
        .replace(/`(?:data_)?stale`/g, '')
        .replace(/\bstale\b[^.]*\binterval\b|\binterval\b[^.]*\bstale\b/gi, '');
      expect(loose, path).not.toMatch(/\bstale\b/i);
    }
  });
});
