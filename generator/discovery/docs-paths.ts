// URL paths of the docs pages: the templates' permalinks, llms.txt and the sitemap all take them from here.
import type { PublishedResource } from '../../schemas/resources.ts';

export const DOCS_PATHS = {
  home: '/',
  overview: '/docs/',
  paymentTerms: '/docs/payment-terms/',
  freshness: '/docs/freshness/',
  educationalNotice: '/docs/educational-notice/',
  payFromCode: '/docs/pay-from-code/',
  // Permalinks written in their templates (site/docs/*.njk); llms.txt links them, and a test asks each of the built
  // site.
  agents: '/docs/agents/',
  arenaRules: '/docs/arena-rules/',
  trackRecord: '/docs/track-record/',
  publishers: '/docs/publishers/',
  apiReference: '/docs/api/',
} as const;

/** A resource's name in URLs (docs page, schema file): `paidMarketRegime` -> `paid-market-regime`. */
export const resourceSlug = (resource: PublishedResource): string =>
  resource.id.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);

export const endpointDocsPath = (resource: PublishedResource): string =>
  `/docs/endpoints/${resourceSlug(resource)}/`;
