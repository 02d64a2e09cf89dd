// The small parts of the site build: charts, the run-history reader, the field table, URLs and crawl files.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as z from 'zod';
import { buildRobotsTxt, buildSitemapXml } from '../generator/discovery/crawl-files.ts';
import { toJsonSchema } from '../generator/discovery/json-schema.ts';
import { generatedAtOf } from '../generator/discovery/run-files.ts';
import { absoluteUrl, normaliseBaseUrl } from '../generator/discovery/urls.ts';
import { bandChartSvg, lineChartSvg, sparklineSvg } from '../generator/site/charts.ts';
import { readRunHistory } from '../generator/site/history.ts';
import { formatChange, formatPrice } from '../generator/site/home-view.ts';
import { fieldRows } from '../generator/site/schema-fields.ts';
import { agreementSentence } from '../generator/site/track-record.ts';

const times = ['2026-01-05T12:00:00.000Z', '2026-01-05T12:20:00.000Z', '2026-01-05T12:40:00.000Z'];

describe('charts', () => {
  it('draws one path per series, breaking the line at a missing value', () => {
    const svg = lineChartSvg({
      title: 'Price',
      times,
      series: [
        { label: 'BTC', color: '#000', values: [1, null, 3] },
        { label: 'ETH', color: '#111', values: [2, 2.5, 3] },
      ],
    });
    expect(svg).toContain('role="img"');
    const paths = [...(svg ?? '').matchAll(/<path d="([^"]*)"/g)].map((m) => m[1]);
    expect(paths).toHaveLength(2);
    expect(paths[0]?.match(/M/g)).toHaveLength(2); // two segments around the gap
    expect(paths[1]?.match(/M/g)).toHaveLength(1);
    expect(svg).toContain('from 2026-01-05 12:00 to 2026-01-05 12:40 UTC'); // the year included
  });

  it('has nothing to draw under two runs or without values', () => {
    expect(
      lineChartSvg({
        title: 'x',
        times: times.slice(0, 1),
        series: [{ label: 'a', color: '#000', values: [1] }],
      }),
    ).toBeNull();
    expect(
      lineChartSvg({
        title: 'x',
        times,
        series: [{ label: 'a', color: '#000', values: [null, null, null] }],
      }),
    ).toBeNull();
    expect(sparklineSvg([5], 'one')).toBeNull();
    expect(sparklineSvg([null, 4, null], 'one value')).toBeNull();
    expect(bandChartSvg('x', [], [], () => '#000')).toBeNull();
  });

  it('keeps a flat series inside the box and escapes every label', () => {
    const svg = sparklineSvg([2, 2, 2], 'A <b> & "c"') ?? '';
    expect(svg).toContain('A &lt;b&gt; &amp; &quot;c&quot;');
    expect(svg).not.toMatch(/NaN|Infinity/);
    const band = bandChartSvg(
      'Regime',
      times,
      [{ label: 'mode', values: ['RISK_ON', 'RISK_OFF', '<x>'] }],
      (v) => (v === 'RISK_ON' ? '#0f0' : '#f00'),
    );
    expect(band?.match(/<rect /g)).toHaveLength(3);
    expect(band).toContain('fill="#0f0"');
    expect(band).toContain('&lt;x&gt;');
  });
});

describe('run history', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'emi-history-'));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  const run = (generated_at: string, extra: Record<string, unknown> = {}) => ({
    generated_at,
    mode: 'simulated',
    market_mode: 'NEUTRAL',
    market_state: 'WAIT',
    confidence: 50,
    risk_score: null,
    coins: { BTC: { price: 1, confidence: 40, bias: 'neutral' } },
    ...extra,
  });

  it('reads nothing from a missing, empty or damaged file', async () => {
    expect(await readRunHistory(undefined)).toEqual([]);
    expect(await readRunHistory(join(dir, 'absent.json'))).toEqual([]);
    await writeFile(join(dir, 'empty.json'), '');
    expect(await readRunHistory(join(dir, 'empty.json'))).toEqual([]);
    await writeFile(join(dir, 'damaged.json'), '{"runs": [');
    expect(await readRunHistory(join(dir, 'damaged.json'))).toEqual([]);
    await writeFile(join(dir, 'nothing.json'), '{"runs": null}');
    expect(await readRunHistory(join(dir, 'nothing.json'))).toEqual([]);
  });

  it('drops malformed runs one by one and sorts the rest oldest first', async () => {
    const file = join(dir, 'history.json');
    await writeFile(
      file,
      JSON.stringify({ runs: [run(times[1] ?? ''), { generated_at: 'yesterday' }, run(times[0] ?? ''), 42] }),
    );
    const runs = await readRunHistory(file);
    expect(runs.map((r) => r.generated_at)).toEqual([times[0], times[1]]);
    expect(runs[0]?.coins.BTC?.price).toBe(1);
  });
});

describe('field table', () => {
  it('flattens nested objects, maps, arrays of objects and nullable fields', () => {
    const Coin = z.object({ price: z.number().nullable().describe('last price') });
    const schema = z.object({
      success: z.boolean(),
      coins: z.record(z.string(), Coin),
      lessons: z.array(z.object({ id: z.string() })),
      mode: z.enum(['simulated', 'live']).optional(),
      updated: z.iso.datetime(),
    });
    const rows = fieldRows(toJsonSchema(schema));
    expect(rows.map((r) => r.name)).toEqual([
      'success',
      'coins',
      'coins.{key}.price',
      'lessons',
      'lessons[].id',
      'mode',
      'updated',
    ]);
    expect(rows.find((r) => r.name === 'coins.{key}.price')).toMatchObject({
      type: 'number | null',
      required: true,
      description: 'last price',
      depth: 1,
    });
    expect(rows.find((r) => r.name === 'mode')).toMatchObject({
      type: 'one of "simulated", "live"',
      required: false,
    });
    expect(rows.find((r) => r.name === 'updated')?.type).toBe('string (ISO 8601 time)');
  });
});

describe('track record', () => {
  it('says how often brain and crowd agreed, and a sentence that reads right when nobody voted', () => {
    expect(agreementSentence(0.625, 8)).toBe('Brain and crowd agreed in 62.5 % of 8 rounds.');
    expect(agreementSentence(1, 1)).toBe('Brain and crowd agreed in 100.0 % of 1 round.');
    for (const [rate, rounds] of [
      [null, null],
      [null, 0],
      [0, 0],
    ] as const) {
      const sentence = agreementSentence(rate, rounds);
      expect(sentence).toMatch(/^Brain and crowd cannot be compared yet: .*crowd consensus\.$/);
      expect(sentence).not.toContain('n/a');
    }
  });
});

describe('formatting, URLs and crawl files', () => {
  it('formats prices and changes for the table', () => {
    expect(formatPrice(97123.4)).toBe('$97,123');
    expect(formatPrice(2.5)).toBe('$2.50');
    expect(formatPrice(0.123456)).toBe('$0.1235');
    expect(formatPrice(null)).toBe('n/a');
    // The same text as en-US's own formatting, across magnitudes and at rounding edges.
    const intl = (price: number, digits: number) =>
      `$${price.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits })}`;
    for (const price of [1000, 999.995, 1234567.5, 2_000_000_000.49, 1, 0.99995, 0.5, 0.00001, 42.125]) {
      const digits = price >= 1000 ? 0 : price >= 1 ? 2 : 4;
      expect(formatPrice(price)).toBe(intl(price, digits));
    }
    expect(formatChange(1.234)).toEqual({ text: '+1.23%', cls: 'up' });
    expect(formatChange(-0.5)).toEqual({ text: '-0.50%', cls: 'down' });
  });

  it('builds absolute URLs from one base URL, with or without a trailing slash or a path prefix', () => {
    expect(normaliseBaseUrl('https://emi.test/')).toBe('https://emi.test');
    expect(absoluteUrl('https://emi.test/emi/', '/llms.txt')).toBe('https://emi.test/emi/llms.txt');
    expect(() => normaliseBaseUrl('not a url')).toThrow();
    expect(() => normaliseBaseUrl('https://emi.test/?x=1')).toThrow();
  });

  it('writes robots.txt and an escaped sitemap with last modification times', () => {
    expect(buildRobotsTxt('https://emi.test')).toBe(
      'User-agent: *\nAllow: /\n\nSitemap: https://emi.test/sitemap.xml\n',
    );
    const xml = buildSitemapXml('https://emi.test', [
      { path: '/a?x=1&y=2', lastmod: '2026-01-05T12:00:00.000Z' },
      { path: '/b/', lastmod: null },
      { path: '/b/', lastmod: null },
    ]);
    expect(xml).toContain(
      '<url><loc>https://emi.test/a?x=1&amp;y=2</loc><lastmod>2026-01-05T12:00:00.000Z</lastmod></url>',
    );
    expect(xml.match(/<url>/g)).toHaveLength(2);
  });

  it('finds the generation time whichever field a body states it in', () => {
    const at = '2026-01-05T12:00:00.000Z';
    expect(generatedAtOf({ source: { generated_at: at } })).toBe(at);
    expect(generatedAtOf({ source: 'words', source_details: { generated_at: at } })).toBe(at);
    expect(generatedAtOf({ updated_utc: at })).toBe(at);
    expect(generatedAtOf({ updated: 'soon' })).toBeNull();
    expect(generatedAtOf(null)).toBeNull();
  });
});
