// What each paid product is and is not, in the words the 402 body uses for people and agents.
import type { PaidResource } from '../schemas/resources.ts';
import type { ResourceLinks } from '../schemas/common.ts';
import type * as z from 'zod';

interface ProductCopy {
  whatThisIs: string;
  freeCounterpart: string;
}

const COPY: Readonly<Record<string, ProductCopy>> = {
  paidMarketRegime: {
    whatThisIs:
      'The market regime with a 0-100 risk score, the risk factors behind it (volatility, leverage, liquidity, ' +
      'breadth, data quality) and a regime line per asset.',
    freeCounterpart: '/api/market-regime.php',
  },
  paidMainBrain: {
    whatThisIs:
      'The full per-coin picture of the seven tracked assets: market, liquidity, derivatives and reasoning for ' +
      'each coin, whether they agree, with the evidence and the limitations of each.',
    freeCounterpart: '/api/main-brain.php',
  },
  atlas: {
    whatThisIs:
      'The developer / AI atlas (public schema 0.1.0): one machine-readable intelligence layer joining every ' +
      'section per asset, with breadth, confidence by asset, evidence by section and limitations.',
    freeCounterpart: '/api/main-brain.php',
  },
  atlasHumanReport: {
    whatThisIs:
      'The atlas written for people: a headline, short narrative sections, a per-asset table, data for charts ' +
      'and the disclaimers in full. The browser client at /x402-buyer/ renders it.',
    freeCounterpart: '/api/main-brain.php',
  },
};

export const WHAT_THIS_IS_NOT =
  'Not financial, investment, trading, tax or legal advice and no recommendation to buy, sell or hold. Not a ' +
  'subscription or an account: one exact payment buys one response. The service never holds funds or keys; ' +
  'your wallet signs the payment.';

export function productCopy(resource: PaidResource): ProductCopy {
  const copy = COPY[resource.id];
  if (!copy) throw new Error(`no product copy for paid resource ${resource.id}`);
  return copy;
}

export function relatedPages(resource: PaidResource): z.infer<typeof ResourceLinks> {
  return {
    free_version: { path: productCopy(resource).freeCounterpart, description: 'the free public snapshot' },
    openapi: { path: '/openapi.json', description: 'OpenAPI 3.1 description with the full response schemas' },
    buyer: { path: '/x402-buyer/', description: 'browser client that pays with a mobile wallet' },
    llms: { path: '/llms.txt', description: 'concise map of the service for AI systems' },
  };
}

/** "x402-market-regime" for "/api/x402-market-regime.php". */
export const endpointName = (resource: PaidResource): string =>
  resource.path.replace(/^.*\//, '').replace(/\.php$/, '');
