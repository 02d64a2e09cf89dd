// An asset whose venues all fail is published as having no data: null readings, `data_status: "unavailable"` and a
// limitation in every body that lists it, never a reading (WAIT, NEUTRAL, ...) that could pass for a call. The
// simulated venues are told not to list ETH, so every request for it fails the way an unknown symbol fails live.
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildOpenApiDocument } from '../generator/discovery/openapi.ts';
import { schemaEntries, schemaFileOf, standaloneSchema } from '../generator/discovery/json-schema.ts';
import { runPipeline } from '../generator/pipeline.ts';
import type { RunReport } from '../generator/pipeline.ts';
import { validatePaidOutput, validatePublicOutput } from '../generator/publish/validate-output.ts';
import { collectMarket } from '../generator/sources/collect.ts';
import { createSimulatedTransport } from '../generator/sources/simulator/transport.ts';
import { TRACKED_ASSETS } from '../schemas/common.ts';
import { FREE_RESOURCES, PAID_RESOURCES, reasoningFileFor } from '../schemas/resources.ts';
import { openApiResponseValidator } from './discovery-ajv.ts';
import { simulatedRun } from './helpers/simulated-run.ts';

const AS_OF = Date.parse('2026-11-21T12:00:00Z');
const GONE = 'ETH';
/** Words of a reading: none may appear in the entry of an asset that had no data. */
const READING_WORDS = /\b(WAIT|OPPORTUNITY|CAUTION|BULLISH|BEARISH|NEUTRAL|bullish|bearish|neutral)\b/;
const addFormats = addFormatsModule.default;

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

interface Run {
  dir: string;
  report: RunReport;
  read: (root: 'site' | 'paid', file: string) => Promise<Json>;
}

async function run(dropped: readonly string[]): Promise<Run> {
  const dir = await mkdtemp(join(tmpdir(), 'emi-no-data-'));
  const report = await runPipeline({
    ...simulatedRun(dir, AS_OF),
    collector: (request) =>
      collectMarket({
        transport: createSimulatedTransport({
          seed: request.seed,
          asOf: request.asOf,
          symbols: TRACKED_ASSETS.filter((s) => !dropped.includes(s)),
        }),
        symbols: request.symbols,
        asOf: request.asOf,
        seed: request.seed,
      }),
  });
  const read = async (root: 'site' | 'paid', file: string) =>
    JSON.parse(await readFile(join(dir, root, file), 'utf8')) as Json;
  return { dir, report, read };
}

/** Every per-asset entry of every body, keyed by where it sits. */
async function entriesOf(r: Run, asset: string): Promise<Record<string, Json>> {
  const mainBrain = await r.read('site', 'api/main-brain.php');
  const liquidity = await r.read('site', 'api/liquidity-lite.php');
  const derivatives = await r.read('site', 'api/derivatives.php');
  const reasoning = await r.read('site', reasoningFileFor(asset));
  const paidRegime = await r.read('paid', 'x402-market-regime.json');
  const paidBrain = await r.read('paid', 'x402-main-brain.json');
  const atlas = await r.read('paid', 'x402-atlas.json');
  const report = await r.read('paid', 'x402-atlas-human-report.json');
  return {
    'main-brain coins': mainBrain.coins[asset],
    'liquidity-lite assets': liquidity.assets[asset],
    'derivatives assets': derivatives.assets[asset],
    'reasoning.php reasoning': reasoning.reasoning,
    'paid market regime assets': paidRegime.assets[asset],
    'paid main brain coins': paidBrain.coins[asset],
    'atlas assets': atlas.intelligence_layer.assets[asset],
    'human report row': report.asset_table.rows.find((row: Json) => row.asset === asset),
  };
}

describe('an asset whose venues all fail', () => {
  let clean: Run;
  let broken: Run;
  beforeAll(async () => {
    [clean, broken] = await Promise.all([run([]), run([GONE])]);
  }, 120_000);
  afterAll(async () => {
    await Promise.all([clean, broken].map((r) => r && rm(r.dir, { recursive: true, force: true })));
  });

  it('is still published, and the run reports why', () => {
    expect(clean.report.status).toBe('ok');
    expect(broken.report.status).toBe('degraded');
    const symbols = new Set(broken.report.issues.map((i) => i.symbol));
    expect([...symbols]).toEqual([GONE]);
  });

  it('says so in every per-asset entry: nulls, data_status "unavailable" and a limitation, no reading', async () => {
    const entries = await entriesOf(broken, GONE);
    for (const [where, entry] of Object.entries(entries)) {
      expect(entry, where).toBeDefined();
      expect(entry.data_status, where).toBe('unavailable');
      expect(JSON.stringify(entry), where).not.toMatch(READING_WORDS);
    }
    const sentence = /ETH: no usable market data this run .*every reading for it is null\./;
    const coin = entries['main-brain coins']!;
    expect(coin).toMatchObject({ bias: null, confidence: null, price: null, change_24h: null });
    expect(coin.summary).toMatch(/no market data this run/);
    expect(entries['liquidity-lite assets']).toMatchObject({
      status: 'unavailable',
      liquidity_context: null,
      confidence: null,
      bias: null,
      metrics: null,
    });
    expect(entries['liquidity-lite assets']!.notes[0]).toMatch(sentence);
    expect(entries['derivatives assets']).toMatchObject({ state: null, vote: null, confidence: null });
    expect(entries['derivatives assets']!.limitations[0]).toMatch(sentence);
    expect(entries['reasoning.php reasoning']).toMatchObject({ prediction: 'NONE', confidence: null });
    expect(entries['reasoning.php reasoning']!.limitations[0]).toMatch(sentence);
    expect(entries['paid market regime assets']).toMatchObject({
      bias: null,
      risk_level: null,
      derivatives_state: null,
    });
    expect(entries['paid market regime assets']!.note).toMatch(sentence);
    expect(entries['paid main brain coins']!.limitations[0]).toMatch(sentence);
    expect(entries['atlas assets']).toMatchObject({
      reasoning_prediction: null,
      derivatives_state: null,
      sections_available: 0,
    });
    const atlas = await broken.read('paid', 'x402-atlas.json');
    expect(atlas.limitations.join('\n')).toMatch(sentence);
  });

  it('leaves every other asset’s entries exactly as in a run where nothing failed', async () => {
    for (const asset of TRACKED_ASSETS.filter((s) => s !== GONE)) {
      const [before, after] = await Promise.all([entriesOf(clean, asset), entriesOf(broken, asset)]);
      expect(after, asset).toEqual(before);
      expect(after['main-brain coins']!.data_status, asset).toBe('available');
    }
  });

  it('publishes bodies that pass the generator’s zod check, the published JSON Schemas and OpenAPI', async () => {
    const checks = [
      ...(await validatePublicOutput(join(broken.dir, 'site'))),
      ...(await validatePaidOutput(join(broken.dir, 'paid'))),
    ];
    expect(checks.filter((c) => !c.ok)).toEqual([]);

    const baseUrl = 'https://emi.test';
    const entries = schemaEntries();
    const openApi = openApiResponseValidator(buildOpenApiDocument({ baseUrl }) as Json);
    const bodies = [
      ...FREE_RESOURCES.filter((r) =>
        ['marketRegime', 'mainBrain', 'liquidityLite', 'derivatives'].includes(r.id),
      ).map((r) => ({ resource: r, root: 'site' as const, file: r.file })),
      {
        resource: FREE_RESOURCES.find((r) => r.id === 'reasoning')!,
        root: 'site' as const,
        file: reasoningFileFor(GONE),
      },
      ...PAID_RESOURCES.map((r) => ({ resource: r, root: 'paid' as const, file: r.file })),
    ];
    for (const { resource, root, file } of bodies) {
      const body = await broken.read(root, file);
      const entry = entries.find((e) => e.fileName === schemaFileOf(resource))!;
      // Ajv with its defaults (strict mode), as a client would use the file under /schemas/.
      const ajv = new Ajv2020();
      addFormats(ajv);
      const validate = ajv.compile(standaloneSchema(entry, baseUrl));
      expect(validate(body), `${file}: ${JSON.stringify(validate.errors)}`).toBe(true);
      expect(openApi(resource.path, '200', body), file).toEqual([]);
    }
  });
});
