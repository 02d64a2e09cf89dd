// A buyer pays for one copy and must be able to tell from it when the next one is due, as every free body says: the
// paid market regime, the atlas and the human report carried only `updated`, and the discovery files told agents
// that two of them "carry no timestamp of its own". Each now carries the run's `source_details` (as liquidity and
// derivatives do beside their `source` string), and the docs name those fields.
import { describe, expect, it } from 'vitest';
import { buildFreeSnapshots } from '../generator/engines/index.ts';
import { buildPaidBodies } from '../generator/engines/paid/index.ts';
import { freshnessFieldsOf } from '../generator/discovery/freshness-fields.ts';
import { buildOpenApiDocument } from '../generator/discovery/openapi.ts';
import { PAID_RESOURCES } from '../schemas/resources.ts';
import { PAID_EXAMPLES } from '../schemas/paid/examples.ts';
import { FIXTURE_CLOCK, fixtureSnapshot, universe, uptrend } from './helpers/market-fixtures.ts';

const free = buildFreeSnapshots(fixtureSnapshot(universe(uptrend)), FIXTURE_CLOCK);
const paid = buildPaidBodies(free, FIXTURE_CLOCK) as unknown as Record<string, Record<string, unknown>>;

type Json = Record<string, Record<string, Record<string, unknown>>>;

/** The value at a dotted path such as "source_details.next_update_due". */
const at = (body: unknown, path: string): unknown =>
  path.split('.').reduce<unknown>((node, key) => (node as Record<string, unknown> | undefined)?.[key], body);

describe('freshness of the paid bodies', () => {
  it.each(PAID_RESOURCES.map((r) => [r.id, r] as const))(
    '%s names when it was made, what market time it reads and when the next run is due',
    (id, resource) => {
      const fields = freshnessFieldsOf(resource);
      const due = fields.find((f) => f.endsWith('next_update_due'));
      const made = fields.find((f) => f.endsWith('generated_at'));
      expect(due, `${id} declares next_update_due`).toBeDefined();
      expect(made, `${id} declares generated_at`).toBeDefined();
      expect(at(paid[id], due!)).toBe(new Date(FIXTURE_CLOCK.nextUpdateDue).toISOString());
      expect(at(paid[id], made!)).toBe(new Date(FIXTURE_CLOCK.generatedAt).toISOString());
      expect(
        at(
          paid[id],
          fields.find((f) => f.endsWith('as_of'))!,
        ),
      ).toBe(free.marketRegime.source.as_of);
    },
  );

  it("states the product's declared cache hint, and is degraded when a free body it joins was", () => {
    const thin = buildFreeSnapshots(
      fixtureSnapshot(universe(uptrend, { fundingRate: null, openInterestChange: null, book: false })),
      FIXTURE_CLOCK,
    );
    // The regime alone reads no book or positioning: only the bodies the join also reads are degraded.
    expect(thin.marketRegime.source.degraded).toBe(false);
    expect(thin.derivatives.source_details.degraded).toBe(true);
    const thinPaid = buildPaidBodies(thin, FIXTURE_CLOCK);
    const sources = {
      paidMarketRegime: thinPaid.paidMarketRegime.source_details,
      paidMainBrain: thinPaid.paidMainBrain.source,
      atlas: thinPaid.atlas.source_details,
      atlasHumanReport: thinPaid.atlasHumanReport.source_details,
    };
    for (const resource of PAID_RESOURCES) {
      const source = sources[resource.id as keyof typeof sources];
      expect(source.cache_seconds, resource.id).toBe(resource.cacheSeconds);
      expect(source.degraded, resource.id).toBe(true);
    }
    expect(sources.atlas.cache_seconds).toBe(0);
    expect(sources.paidMarketRegime.cache_seconds).toBe(60);
    expect(buildPaidBodies(free, FIXTURE_CLOCK).atlas.source_details.degraded).toBe(false);
  });

  it('the examples carry the same fields, so that the OpenAPI examples show them', () => {
    for (const resource of PAID_RESOURCES) {
      const example = PAID_EXAMPLES[resource.id as keyof typeof PAID_EXAMPLES];
      for (const field of freshnessFieldsOf(resource))
        expect(at(example, field), `${resource.id} example: ${field}`).toEqual(expect.any(String));
    }
  });

  it('the OpenAPI document names those fields for each paid path, never "no timestamp"', () => {
    const paths = (buildOpenApiDocument({ baseUrl: 'https://emi.test' }) as { paths: Record<string, Json> })
      .paths;
    for (const resource of PAID_RESOURCES) {
      const operation = paths[resource.path]!.get!;
      expect(operation.description, resource.path).not.toMatch(/no timestamp/);
      expect(operation['x-freshness-fields'], resource.path).toEqual(freshnessFieldsOf(resource));
      expect(operation.description, resource.path).toMatch(/next_update_due/);
    }
  });
});
