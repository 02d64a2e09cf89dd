// Renders deploy/nginx/emi.conf.template into a ready nginx server configuration: paths, ports, the asset
// list, the cache hint and the JSON error bodies all come from the project's own constants.
//
//   node bin/run-ts.js deploy/nginx/render.ts --root /srv/emi/dist [--listen 80] [--paywall 127.0.0.1:8402]
//     [--server-name example.org] > /etc/nginx/conf.d/emi.conf
import { readFile } from 'node:fs/promises';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { CACHE_SECONDS, DEFAULT_REASONING_ASSET, TRACKED_ASSETS } from '../../schemas/common.ts';
import { invalidAssetError, notFoundError } from '../../schemas/error.ts';

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
const PROXY_SNIPPET = new URL('./emi-proxy.conf', import.meta.url);

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

export async function renderNginxSite(options: NginxSiteOptions): Promise<string> {
  const snippet = (await readFile(PROXY_SNIPPET, 'utf8'))
    .split('\n')
    .filter((line) => line.trim() !== '' && !line.startsWith('#'))
    .join('\n        ');
  const values: Record<string, string> = {
    __PAYWALL__: directiveValue('paywall upstream', options.paywallUpstream),
    __LISTEN__: directiveValue('listen', options.listen),
    __SERVER_NAME__: directiveValue('server name', options.serverName ?? '_'),
    __ROOT__: directiveValue('root', options.root),
    __DEFAULT_ASSET__: DEFAULT_REASONING_ASSET,
    __ASSET_ALTERNATION__: TRACKED_ASSETS.join('|'),
    __CACHE_SECONDS__: String(CACHE_SECONDS),
    __INVALID_ASSET_JSON__: nginxQuoted(invalidAssetError()),
    __NOT_FOUND_JSON__: nginxQuoted(notFoundError()),
    __PAYWALL_DOWN_JSON__: nginxQuoted({
      success: false,
      error: 'paywall_unavailable',
      message: 'The payment service is not reachable right now. Nothing was charged; try again shortly.',
    }),
  };
  const template = (await readFile(TEMPLATE, 'utf8')).replaceAll('include __PROXY_SNIPPET__;', snippet);
  return template.replace(/__[A-Z_]+__/g, (token) => {
    const value = values[token];
    if (value === undefined) throw new Error(`unknown placeholder ${token} in the nginx template`);
    return value;
  });
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      root: { type: 'string' },
      listen: { type: 'string', default: '80' },
      paywall: { type: 'string', default: DEFAULT_PAYWALL_UPSTREAM },
      'server-name': { type: 'string' },
    },
  });
  if (!values.root) throw new Error('--root (the absolute path of the built dist/ folder) is required');
  process.stdout.write(
    await renderNginxSite({
      root: values.root,
      listen: values.listen,
      paywallUpstream: values.paywall,
      serverName: values['server-name'],
    }),
  );
}

if (process.argv[1] && pathToFileURL(process.argv[1]).href === import.meta.url) {
  await main();
}

export const templatePath = fileURLToPath(TEMPLATE);
