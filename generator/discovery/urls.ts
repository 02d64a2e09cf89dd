// Every absolute URL of the site comes from one configured base URL.

export const DEFAULT_BASE_URL = 'http://127.0.0.1:8080';

/** The base URL from the environment (EMI_BASE_URL), without a trailing slash. */
export const baseUrlFromEnv = (env: NodeJS.ProcessEnv = process.env): string =>
  normaliseBaseUrl(env.EMI_BASE_URL || DEFAULT_BASE_URL);

/**
 * What makes an http(s) URL unusable as the site's base URL, in words, or null. The base URL is an origin: the pages,
 * the API bodies and their links use root-absolute paths, robots.txt is only ever looked for at the root, and no
 * deploy recipe serves the site under a path, so a path prefix (anything but "/") would publish discovery files that
 * point where nothing is served. A user name or password would be published in robots.txt, sitemap.xml and
 * llms.txt; a query or a fragment (even an empty one) would be glued into every published URL.
 */
export function baseUrlProblem(url: URL): string | null {
  if (url.username || url.password) return 'carries a user name or password, which would be published';
  if (url.pathname !== '/')
    return `carries a path (${url.pathname}), but the site is served from the root of its host only`;
  if (url.href.includes('?')) return 'carries a query';
  if (url.href.includes('#')) return 'carries a fragment';
  return null;
}

export function normaliseBaseUrl(baseUrl: string): string {
  const url = new URL(baseUrl); // throws on a malformed value: better at build time than in published links
  if (url.search || url.hash) throw new Error(`base URL must not carry a query or fragment: ${baseUrl}`);
  return url.href.replace(/\/+$/, '');
}

/**
 * `path` must start with "/". The base URL is an origin (the commands refuse anything else, see `baseUrlProblem`);
 * a trailing slash is dropped.
 */
export const absoluteUrl = (baseUrl: string, path: string): string => `${normaliseBaseUrl(baseUrl)}${path}`;
