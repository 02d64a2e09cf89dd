// What the worker's own JSON/API answers tell a browser, the same on Node and in workerd: never sniff the body as
// something else (`nosniff`), load and run nothing if the body is opened as a page and let no page frame it (OWASP's
// REST policy, `default-src 'none'; frame-ancestors 'none'`), and send no referrer from it. The paywall app writes
// `API_SECURITY_HEADERS` into each of its answers (app.ts: its unpaid 402 answers on Hono's synchronous path); the
// routes without such a path (the vote route, the publishers' admin route) use `apiSecurityHeaders`, Hono's own
// middleware. The site's pages keep the site's policy (`CONTENT_SECURITY_POLICY` in schemas/delivery.ts): the
// publishers' storefront pages set it themselves, and the policy's preflight carries the site's header set.
import { secureHeaders } from 'hono/secure-headers';

// The header values live in schemas/delivery.ts beside the site's own policy, so that every host reads them once.
export { API_CONTENT_SECURITY_POLICY, API_SECURITY_HEADERS } from '../schemas/delivery.ts';

/**
 * Hono's secure-headers middleware with exactly `API_SECURITY_HEADERS` and nothing else. Every option is named:
 * its other defaults are for HTML sites and are left to the host (HSTS, whose `includeSubDomains` is the operator's
 * call), or would be wrong here (`Cross-Origin-Resource-Policy: same-origin` for an API read from every origin,
 * `X-Frame-Options: SAMEORIGIN` beside `frame-ancestors 'none'`). `overwrite: false` keeps what a route set itself.
 */
export const apiSecurityHeaders = secureHeaders({
  contentSecurityPolicy: { defaultSrc: ["'none'"], frameAncestors: ["'none'"] },
  xContentTypeOptions: true, // nosniff
  referrerPolicy: 'no-referrer',
  crossOriginEmbedderPolicy: false,
  crossOriginResourcePolicy: false,
  crossOriginOpenerPolicy: false,
  originAgentCluster: false,
  strictTransportSecurity: false,
  xDnsPrefetchControl: false,
  xDownloadOptions: false,
  xFrameOptions: false,
  xPermittedCrossDomainPolicies: false,
  xXssProtection: false,
  removePoweredBy: false,
  overwrite: false,
});
