// Bad publisher configuration stops the worker at start with one line naming the publisher and the field; the
// USDC opt-in of each publisher's address is checked against an algod API when one is configured.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Hono } from 'hono';
import { listen } from '../paywall-worker/node-listen.ts';
import { createLocalPaywall } from '../paywall-worker/local.ts';
import {
  PublisherConfigError,
  PublishersConfigSchema,
  atomicFromUsd,
  parsePublishers,
} from '../paywall-worker/publishers/config.ts';
import { checkPublisherOptIns } from '../paywall-worker/publishers/opt-in.ts';
import { account, publisherEntry } from './publishers-harness.ts';

const publisherAddress = account();
const operator = account();

function refusal(entries: unknown): string {
  try {
    parsePublishers(entries, operator);
  } catch (error) {
    expect(error).toBeInstanceOf(PublisherConfigError);
    const message = (error as Error).message;
    expect(message).not.toContain('\n'); // one line
    return message;
  }
  throw new Error('expected the configuration to be refused');
}

describe('publisher configuration', () => {
  it('accepts a valid entry and resolves prices to atomic units', () => {
    const [publisher] = parsePublishers([publisherEntry('acme', publisherAddress)], operator);
    expect(publisher?.products).toEqual([
      expect.objectContaining({ slug: 'atlas-human-report', priceUsd: '0.15', amountAtomic: '150000' }),
      expect.objectContaining({ slug: 'atlas', priceUsd: '0.05', amountAtomic: '50000' }),
    ]);
    expect(publisher?.brand.accentColor).toBe('#aa3300');
    expect(parsePublishers(undefined)).toEqual([]);
    expect(atomicFromUsd('0.1')).toBe(100000n);
    expect(atomicFromUsd('12.000001')).toBe(12000001n);
  });

  it.each([
    [
      'a bad address',
      { payTo: 'NOT-AN-ADDRESS' },
      'publisher "acme": payTo: must be a valid Algorand address',
    ],
    ['a bad id', { id: 'Acme Corp' }, 'publisher "Acme Corp": id: must be a slug'],
    [
      'a price below the base price',
      { products: { atlas: { priceUsd: '0.01' } } },
      'publisher "acme": products.atlas.priceUsd: 0.01 is below the base price 0.02',
    ],
    [
      'an unknown product',
      { products: { 'crystal-ball': { priceUsd: '1' } } },
      'publisher "acme": products.crystal-ball: unknown product',
    ],
    [
      'a price that is not a USD amount',
      { products: { atlas: { priceUsd: '0.1234567' } } },
      'publisher "acme": products.atlas.priceUsd: must be a USD amount',
    ],
    ['no products', { products: {} }, 'publisher "acme": products: must name at least one product'],
    [
      'a javascript: terms link',
      { brand: { name: 'A', contactUrl: 'mailto:a@a.example', termsUrl: 'javascript:alert(1)' } },
      'publisher "acme": brand.termsUrl: must be an https:// URL',
    ],
    [
      'a plain-http logo',
      {
        brand: {
          name: 'A',
          logoUrl: 'http://a.example/logo.png',
          contactUrl: 'https://a.example',
          termsUrl: 'https://a.example/t',
        },
      },
      'publisher "acme": brand.logoUrl: must be an https:// URL',
    ],
    [
      'a colour that is not a hex colour',
      {
        brand: {
          name: 'A',
          accentColor: 'red;}</style><script>',
          contactUrl: 'https://a.example',
          termsUrl: 'https://a.example/t',
        },
      },
      'publisher "acme": brand.accentColor: must be a hex colour',
    ],
    [
      'an empty brand name',
      { brand: { name: '  ', contactUrl: 'https://a.example', termsUrl: 'https://a.example/t' } },
      'publisher "acme": brand.name: must not be empty',
    ],
    ['an unknown field', { royalties: 0.5 }, 'publisher "acme": (entry): Unrecognized key: "royalties"'],
  ])('refuses %s, naming the publisher and the field', (_, change, expected) => {
    expect(refusal([{ ...publisherEntry('acme', publisherAddress), ...change }])).toContain(expected);
  });

  it('refuses duplicate ids, the operator payee, and a list that is not a list', () => {
    expect(refusal([publisherEntry('acme', publisherAddress), publisherEntry('acme', account())])).toBe(
      'publisher "acme": id: used twice',
    );
    expect(refusal([publisherEntry('acme', operator)])).toBe(
      `publisher "acme": payTo: is the operator's own payee address`,
    );
    expect(refusal({ acme: {} })).toBe('publishers: must be a list');
    expect(refusal([{ brand: {} }])).toMatch(/^publisher #1: /);
  });

  it('exports a schema the whole config file can plug in', () => {
    expect(PublishersConfigSchema.safeParse([publisherEntry('acme', publisherAddress)]).success).toBe(true);
    expect(PublishersConfigSchema.parse(undefined)).toEqual([]);
  });
});

describe('USDC opt-in, checked against algod', () => {
  const optedIn = account();
  let algod: Awaited<ReturnType<typeof listen>>;
  let algodUrl: string;
  beforeAll(async () => {
    // algod's own answers for GET /v2/accounts/{address}/assets/{asset-id}.
    const app = new Hono();
    app.get('/v2/accounts/:address/assets/:asset', (c) =>
      c.req.param('address') === optedIn && c.req.param('asset') === '31566704'
        ? c.json({ round: 1, 'asset-holding': { amount: 0, 'asset-id': 31566704, 'is-frozen': false } })
        : c.json({ message: 'account asset info not found' }, 404),
    );
    algod = await listen(app, 0, '127.0.0.1');
    algodUrl = `http://127.0.0.1:${algod.port}`;
  });
  afterAll(async () => {
    await algod?.close();
  });

  it('passes an opted-in address and names a publisher whose address is not opted in', async () => {
    const publishers = parsePublishers([publisherEntry('good', optedIn), publisherEntry('bad', account())]);
    await expect(checkPublisherOptIns(publishers.slice(0, 1), { algodUrl })).resolves.toBeUndefined();
    await expect(checkPublisherOptIns(publishers, { algodUrl })).rejects.toThrow(
      /^publisher "bad": payTo: [A-Z2-7]{58} has not opted in to USDC \(ASA 31566704\)$/,
    );
  });

  it('refuses to start when algod cannot be asked', async () => {
    const publishers = parsePublishers([publisherEntry('good', optedIn)]);
    await expect(
      checkPublisherOptIns(publishers, { algodUrl: 'http://127.0.0.1:1', timeoutMs: 2000 }),
    ).rejects.toThrow(/^publisher "good": payTo: USDC opt-in could not be checked/);
  });

  it('stops the local paywall at start on a bad publisher in the config file', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'emi-publishers-config-'));
    try {
      const configFile = join(dir, 'emi.config.json');
      const start = (publishers: unknown) =>
        writeFile(configFile, JSON.stringify({ sources: {}, publishers })).then(() =>
          createLocalPaywall({
            paidDir: dir,
            baseUrl: 'http://127.0.0.1:8080',
            devFacilitatorPort: 0,
            configFile,
            ledgerFile: join(dir, 'publishers.sqlite'),
            algodUrl,
          }),
        );
      await expect(
        start([{ ...publisherEntry('acme', optedIn), products: { atlas: { priceUsd: '0.001' } } }]),
      ).rejects.toThrow('publisher "acme": products.atlas.priceUsd: 0.001 is below the base price 0.02');
      await expect(start([publisherEntry('acme', account())])).rejects.toThrow(/has not opted in to USDC/);
      const running = await start([publisherEntry('acme', optedIn)]);
      expect(running.describe().join('\n')).toContain(`publisher acme: /p/acme/ pays ${optedIn}`);
      await running.close();
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
