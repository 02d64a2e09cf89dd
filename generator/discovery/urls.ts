// Every absolute URL of the site comes from one configured base URL.

export const DEFAULT_BASE_URL = 'http://127.0.0.1:8080';

/** The base URL from the environment (EMI_BASE_URL), without a trailing slash. */
export const baseUrlFromEnv = (env: NodeJS.ProcessEnv = process.env): string =>
  normaliseBaseUrl(env.EMI_BASE_URL || DEFAULT_BASE_URL);

export function normaliseBaseUrl(baseUrl: string): string {
  const url = new URL(baseUrl); // throws on a malformed value: better at build time than in published links
  if (url.search || url.hash) throw new Error(`base URL must not carry a query or fragment: ${baseUrl}`);
  return url.href.replace(/\/+$/, '');
}

/** `path` must start with "/"; the base URL may carry a path prefix (https://host/emi). */
export const absoluteUrl = (baseUrl: string, path: string): string => `${normaliseBaseUrl(baseUrl)}${path}`;
