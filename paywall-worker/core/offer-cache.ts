// What the core builds once per path and data generation rather than once per request: the offer (requirements,
// PaymentRequired and the encoded 402, which the unpaid answer reuses as it is) and the paid body with a sale point's
// own fields merged in. The resource server is initialized (its facilitator's /supported read) before the first
// offer, and again after a failure.
import type { x402ResourceServer } from '@x402/core/server';
import { buildOffer } from '../offers.ts';
import type { Offer, OfferSettings, SalePoint } from '../offers.ts';

/** The same data generation: an offer (or a body) built for one serves the other. */
export const sameData = (a: Offer['data'], b: Offer['data']): boolean =>
  a.generatedAt === b.generatedAt && a.mode === b.mode;

export interface OfferCache {
  /** The offer for the point's current data, built when the data changed. */
  offerFor(point: SalePoint, data: Offer['data']): Promise<Offer>;
  /** The offer last built for this path, if any (for the unpaid 402 answered at once). */
  encoded(path: string): Offer | undefined;
  /** The paid file's text as this point serves it. */
  servedBody(point: SalePoint, text: string): string;
}

export function createOfferCache(deps: {
  server: x402ResourceServer;
  offerSettings: OfferSettings;
}): OfferCache {
  const { server } = deps;
  let initialized: Promise<void> | null = null;
  const initialize = (): Promise<void> => {
    initialized ??= server.initialize().catch((error: unknown) => {
      initialized = null; // retried on the next request
      throw error;
    });
    return initialized;
  };

  // One offer per path and data generation, encoded once.
  const offers = new Map<string, Offer>();
  async function offerFor(point: SalePoint, data: Offer['data']): Promise<Offer> {
    const known = offers.get(point.path);
    if (known && sameData(known.data, data)) return known;
    await initialize();
    const offer = await buildOffer(server, point, deps.offerSettings, data);
    offers.set(point.path, offer);
    return offer;
  }

  // A sale point's own fields (a publisher block) merged into the paid body, once per data generation.
  const bodies = new Map<string, { source: string; body: string }>();
  function servedBody(point: SalePoint, text: string): string {
    if (!point.bodyFields) return text;
    const known = bodies.get(point.path);
    if (known?.source === text) return known.body;
    const body = JSON.stringify({ ...(JSON.parse(text) as Record<string, unknown>), ...point.bodyFields });
    bodies.set(point.path, { source: text, body });
    return body;
  }

  return { offerFor, encoded: (path) => offers.get(path), servedBody };
}
