// Renders deploy/nginx/emi.conf.template into a ready nginx server configuration. Paths, headers, cache hints,
// the reasoning mapping and the JSON error bodies all come from the delivery policy (schemas/delivery.ts).
import { readFile } from 'node:fs/promises';
import { DEFAULT_REASONING_ASSET, TRACKED_ASSETS } from '../../schemas/common.ts';
import {
  FREE_CACHE,
  NO_STORE,
  PUBLISHER_PREFIX,
  STATUS_PATH,
  WORKER_PATHS,
  PREFLIGHT_MAX_AGE_SECONDS,
  SITE_HEADERS,
  paywallDownError,
} from '../../schemas/delivery.ts';
import { invalidAssetError, notFoundError } from '../../schemas/error.ts';
import { reasoningFileFor } from '../../schemas/resources.ts';

export interface NginxSiteOptions {
  /** Absolute path of the built site (dist/). */
  root: string;
  /** nginx `listen` value, e.g. "80" or "127.0.0.1:8080". */
  listen: string;
  /** host:port of the paywall worker. */
  paywallUpstream: string;
  serverName?: string;
}

export const DEFAULT_PAYWALL_UPSTREAM = '127.0.0.1:8402';

const TEMPLATE = new URL('./emi.conf.template', import.meta.url);

/** A JSON body inside an nginx single-quoted string: it must not end the string or name a variable. */
function nginxQuoted(body: unknown): string {
  const json = JSON.stringify(body);
  if (/['$\\]/.test(json)) throw new Error(`cannot place this JSON in an nginx string: ${json}`);
  return json;
}

/** Rejects values that would break out of their directive. */
function directiveValue(name: string, value: string): string {
  if (!/^[A-Za-z0-9_.:/[\]-]+$/.test(value))
    throw new Error(`unsafe ${name} for nginx: ${JSON.stringify(value)}`);
  return value;
}

const regexEscape = (text: string): string => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

const siteHeaders = (indent: string): string =>
  Object.entries(SITE_HEADERS)
    .map(([name, value]) => `${indent}add_header ${name} "${value}" always;`)
    .join('\n');

export async function renderNginxSite(options: NginxSiteOptions): Promise<string> {
  const values: Record<string, string> = {
    __PAYWALL__: directiveValue('paywall upstream', options.paywallUpstream),
    __LISTEN__: directiveValue('listen', options.listen),
    __SERVER_NAME__: directiveValue('server name', options.serverName ?? '_'),
    __ROOT__: directiveValue('root', options.root),
    __DEFAULT_ASSET__: DEFAULT_REASONING_ASSET,
    // nginx cannot upper-case a variable: one case-insensitive line per asset.
    __REASONING_MAP__: TRACKED_ASSETS.map(
      (asset) => `    "~*^1:${asset}$" /${reasoningFileFor(asset)};`,
    ).join('\n'),
    __WORKER_ALTERNATION__: [...WORKER_PATHS.map(regexEscape), `${regexEscape(PUBLISHER_PREFIX)}.*`].join(
      '|',
    ),
    __STATUS_PATH__: STATUS_PATH,
    __FREE_CACHE__: FREE_CACHE,
    __NO_STORE__: NO_STORE,
    __PREFLIGHT_MAX_AGE__: String(PREFLIGHT_MAX_AGE_SECONDS),
    __SITE_HEADERS__: siteHeaders('    '),
    __SITE_HEADERS_NESTED__: siteHeaders('        '),
    __INVALID_ASSET_JSON__: nginxQuoted(invalidAssetError()),
    __NOT_FOUND_JSON__: nginxQuoted(notFoundError()),
    __PAYWALL_DOWN_JSON__: nginxQuoted(paywallDownError()),
  };
  const template = await readFile(TEMPLATE, 'utf8');
  return template.replace(/__[A-Z_]+__/g, (token) => {
    const value = values[token];
    if (value === undefined) throw new Error(`unknown placeholder ${token} in the nginx template`);
    return value;
  });
}
