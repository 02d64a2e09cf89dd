// What each published resource is for, in one or two sentences: shared by the OpenAPI document, llms.txt and
// the docs pages so that the three never describe an endpoint differently.
import { FREE_RESOURCES, PAID_RESOURCES } from '../../schemas/resources.ts';
import type { PublishedResource } from '../../schemas/resources.ts';

export type EndpointGroup = 'snapshot' | 'arena' | 'paid';

export interface EndpointNote {
  group: EndpointGroup;
  purpose: string;
  /** When an agent should read this resource (llms.txt note). */
  useWhen: string;
}

export const ENDPOINT_NOTES: Readonly<Record<string, EndpointNote>> = {
  marketRegime: {
    group: 'snapshot',
    purpose:
      'The market-wide regime of the tracked assets: risk-on, risk-off or neutral, its state and the breadth, ' +
      'trend, volatility, drawdown and correlation evidence behind it.',
    useWhen: 'Start here: one call gives the market backdrop every other reading sits in.',
  },
  mainBrain: {
    group: 'snapshot',
    purpose:
      'One snapshot of the brain: bias, confidence, price and 24-hour change for each asset, the market ' +
      'context and the public track record of past calls.',
    useWhen: 'Per-asset bias and confidence in one file, with the brain’s track record.',
  },
  liquidityLite: {
    group: 'snapshot',
    purpose: 'Spreads, order-book depth, relative volume and market structure for each asset.',
    useWhen: 'To judge whether a reading sits on deep or thin markets.',
  },
  derivatives: {
    group: 'snapshot',
    purpose: 'Perpetual funding, open interest and liquidations for each asset, read as positioning states.',
    useWhen: 'To see how leveraged traders are positioned.',
  },
  reasoning: {
    group: 'snapshot',
    purpose:
      'The brain’s reading of one asset in plain language: the side the evidence leans to, its confidence and ' +
      'the points behind it. Choose the asset with ?asset= (default BTC).',
    useWhen: 'For a plain-language explanation of one asset.',
  },
  statistics: {
    group: 'snapshot',
    purpose: 'Counts and rates about the main brain, the learning loop, the arena and the API itself.',
    useWhen: 'For the state of the system, not of the market.',
  },
  humanConsensus: {
    group: 'arena',
    purpose:
      'The crowd’s votes in the active hourly arena round: counts, shares, consensus and disagreement.',
    useWhen: 'To compare the crowd with the brain; sparse and never a guarantee.',
  },
  teacherLessons: {
    group: 'arena',
    purpose:
      'Lessons from resolved rounds: what the brain and the crowd called, what happened, and the pattern.',
    useWhen: 'For historical learning context, not a live signal.',
  },
  sharedIntelligence: {
    group: 'arena',
    purpose:
      'The active round side by side: brain call, crowd consensus, their combination, teacher brain, price ' +
      'context and system integrity.',
    useWhen: 'For the combined brain-and-crowd view of the active round.',
  },
  paidMarketRegime: {
    group: 'paid',
    purpose: 'The market regime in depth: risk score and level, risk factors and a regime reading per asset.',
    useWhen: 'When the free regime is not detailed enough.',
  },
  paidMainBrain: {
    group: 'paid',
    purpose: 'The main brain in depth: market, liquidity, derivatives and reasoning per asset in one body.',
    useWhen: 'For the whole per-asset picture in one paid call.',
  },
  atlas: {
    group: 'paid',
    purpose:
      'The developer / AI atlas (public schema 0.1.0, evolving): an intelligence layer of agreement, ' +
      'confidence and evidence across every section, for machines.',
    useWhen: 'For agents that want every section cross-checked in one machine-readable body.',
  },
  atlasHumanReport: {
    group: 'paid',
    purpose:
      'The atlas as a report for people: sections, tables and chart series, made to be read in a browser.',
    useWhen: 'For people; the browser client at /x402-buyer/ buys and renders it.',
  },
};

export const noteFor = (resource: PublishedResource): EndpointNote => {
  const note = ENDPOINT_NOTES[resource.id];
  if (!note) throw new Error(`no endpoint note for resource "${resource.id}"`);
  return note;
};

/** Spec 1: market regime, main brain, liquidity, derivatives, reasoning, statistics, then paid. */
const INTEGRATION_ORDER = [
  'marketRegime',
  'mainBrain',
  'liquidityLite',
  'derivatives',
  'reasoning',
  'statistics',
];

/** The free resources in the recommended integration order, the arena resources after them. */
export function freeResourcesInIntegrationOrder() {
  const rank = (id: string) => {
    const i = INTEGRATION_ORDER.indexOf(id);
    return i === -1 ? INTEGRATION_ORDER.length : i;
  };
  return [...FREE_RESOURCES].sort((a, b) => rank(a.id) - rank(b.id));
}

export const paidResources = () => [...PAID_RESOURCES];
