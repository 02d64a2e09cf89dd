// Renders deploy/nginx/emi.conf.template into a ready nginx server configuration. Paths, headers, cache hints,
// the reasoning mapping and the JSON error bodies all come from the delivery policy (schemas/delivery.ts).
import { readFile } from 'node:fs/promises';
import { isAbsolute } from 'node:path';
import { domainToASCII } from 'node:url';
import { CACHE_SECONDS, DEFAULT_REASONING_ASSET, TRACKED_ASSETS } from '../../schemas/common.ts';
import {
  ALLOWED_METHODS,
  BUYER_CONFIG_PATH,
  ENTRY_SCRIPTS,
  HASHED_CHUNK_PATTERN,
  IMMUTABLE_CACHE,
  REVALIDATE_CACHE,
  RETRY_AFTER_SECONDS,
  NO_STORE,
  PUBLISHER_PREFIX,
  STATUS_PATH,
  WORKER_PATHS,
  PREFLIGHT_MAX_AGE_SECONDS,
  POST_METHODS,
  POST_PATHS,
  PUBLISHER_CREDITS_PATTERN,
  SITE_HEADERS,
  contentTypeFor,
  methodNotAllowedError,
  paywallDownError,
  paywallOutcomeUnknownError,
} from '../../schemas/delivery.ts';
import { invalidAssetError, notFoundError } from '../../schemas/error.ts';
import { reasoningFileFor } from '../../schemas/resources.ts';
import { MAX_FACILITATOR_TIMEOUT_MS } from '../../paywall-worker/config.ts';

export interface NginxSiteOptions {
  /** Absolute path of the built site (dist/). */
  root: string;
  /** nginx `listen` value, e.g. "80" or "127.0.0.1:8080". */
  listen: string;
  /** host:port of the paywall worker. */
  paywallUpstream: string;
  /** One name or several separated by spaces, as nginx's server_name takes them; default "_" (any). */
  serverName?: string;
}

/** A value an operator gave that cannot make a working configuration: a usage mistake, said in one line. */
export class NginxOptionError extends Error {}

/**
 * How long nginx waits for the worker's answer. Every call a paid request makes to the facilitator or the indexer
 * is bounded by the facilitator timeout (at most MAX_FACILITATOR_TIMEOUT_MS), and one request may make up to six
 * in a row (/supported on the first sale, settle, and the indexer's transaction and health lookups before and
 * after settling again a payment whose first answer was lost), after the payee's opt-in check (10 s): nginx must
 * wait longer than all of them, or it answers the buyer while a settlement is still in progress.
 */
export const WORKER_CALLS_PER_REQUEST = 6;
export const PAYEE_CHECK_MS = 10_000;
export const PAYWALL_READ_TIMEOUT_SECONDS =
  Math.ceil((WORKER_CALLS_PER_REQUEST * MAX_FACILITATOR_TIMEOUT_MS + PAYEE_CHECK_MS) / 1000) + 20;

/**
 * The extensions whose content type the delivery policy sets (schemas/delivery.ts `contentTypeFor`), `.php` aside
 * (its own location). nginx would take each from Debian's mime.types, which differs (text/xml, application/javascript)
 * or has none (csv, yaml, mjs, webmanifest: application/octet-stream).
 */
const TYPED_EXTENSIONS = [
  'json',
  'html',
  'txt',
  'xml',
  'yaml',
  'csv',
  'css',
  'js',
  'mjs',
  'svg',
  'png',
  'ico',
  'webmanifest',
];

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
    throw new NginxOptionError(`unsafe ${name} for nginx: ${JSON.stringify(value)}`);
  return value;
}

/** nginx reads a relative root from its own prefix (/usr/share/nginx/): every file would be a 404. */
function rootValue(root: string): string {
  if (!isAbsolute(root)) {
    throw new NginxOptionError(
      `the root must be an absolute path (nginx would look for ${JSON.stringify(root)} under its own prefix ` +
        `and answer 404 for every file): e.g. /opt/emi/dist`,
    );
  }
  return directiveValue('root', root);
}

const PORT = /^([1-9][0-9]{0,4})$/;
const validPort = (port: string): boolean => PORT.test(port) && Number(port) <= 65535;
const HOST = /^([A-Za-z0-9.-]+|\[[0-9A-Fa-f:.]+\])$/;

/** `host:port`: a port-less upstream would be port 80, which may be this very nginx. */
function upstreamValue(value: string): string {
  const match = /^(.+):([^:\]]+)$/.exec(value);
  if (!match || !HOST.test(match[1] ?? '') || !validPort(match[2] ?? '')) {
    throw new NginxOptionError(
      `the paywall upstream must be host:port with a port of 1-65535, e.g. 127.0.0.1:8402: ${JSON.stringify(value)}`,
    );
  }
  return value;
}

/** `listen`: a port, or address:port. */
function listenValue(value: string): string {
  const match = /^(?:(.+):)?([^:\]]+)$/.exec(value);
  if (!match || (match[1] !== undefined && !HOST.test(match[1])) || !validPort(match[2] ?? '')) {
    throw new NginxOptionError(
      `listen must be a port or address:port, e.g. 80 or 127.0.0.1:8080: ${JSON.stringify(value)}`,
    );
  }
  return value;
}

const SERVER_NAME = /^(\*\.|\.)?[a-z0-9_-]+(\.[a-z0-9_-]+)*(\.\*)?$/;

/** server_name: names separated by spaces, an internationalised one written in punycode (what nginx matches). */
function serverNameValue(value: string): string {
  const names = value.trim().split(/\s+/);
  return names
    .map((name) => {
      if (/[/:]/.test(name) && !/^\[[0-9A-Fa-f:.]+\]$/.test(name)) {
        throw new NginxOptionError(
          `the server name must be a host name, not a URL or host:port (e.g. emi.example.org): ${JSON.stringify(name)}`,
        );
      }
      if (name === '_' || /^\[[0-9A-Fa-f:.]+\]$/.test(name)) return name;
      const ascii = domainToASCII(name);
      if (!ascii || !SERVER_NAME.test(ascii)) {
        throw new NginxOptionError(`the server name is not a host name: ${JSON.stringify(name)}`);
      }
      return ascii;
    })
    .join(' ');
}

const regexEscape = (text: string): string => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** The site's header set; the allowed methods from the map that gives a preflight its path's own. */
const siteHeaders = (indent: string): string =>
  Object.entries(SITE_HEADERS)
    .map(([name, value]) =>
      name === 'Access-Control-Allow-Methods'
        ? `${indent}add_header ${name} $emi_allow_methods always;`
        : `${indent}add_header ${name} "${value}" always;`,
    )
    .join('\n');

/** The paths a preflight allows POST at, as one alternation (anchors added by the template). */
const postAlternation = (): string =>
  [...POST_PATHS.map(regexEscape), PUBLISHER_CREDITS_PATTERN.replace(/^\^|\$$/g, '')].join('|');

/**
 * One character of a query value as the policy reads it (URL-decoded, case-insensitive): itself or its
 * percent-encoding, in either case (`E`, `e`, `%45`, `%65`). nginx does not decode `$args`.
 */
function encodedChar(char: string, anyCase: boolean): string {
  const spellings = new Set([char]);
  for (const c of anyCase ? [char.toUpperCase(), char.toLowerCase()] : [char]) {
    spellings.add(`%${c.charCodeAt(0).toString(16).toUpperCase().padStart(2, '0')}`);
  }
  return `(?:${[...spellings].map(regexEscape).join('|')})`;
}
const encoded = (text: string, anyCase: boolean): string =>
  [...text].map((char) => encodedChar(char, anyCase)).join('');

/** A location per content type: the policy's type, whatever mime.types says. `scope` narrows the paths. */
function typeLocations(indent: string, scope = ''): string {
  const byType = new Map<string, string[]>();
  for (const extension of TYPED_EXTENSIONS) {
    const type = contentTypeFor(`x.${extension}`);
    if (!type) throw new Error(`the delivery policy has no content type for .${extension}`);
    const bare = type.split(';')[0] as string;
    byType.set(bare, [...(byType.get(bare) ?? []), extension]);
  }
  return [...byType]
    .map(
      ([type, extensions]) =>
        `${indent}location ~* ${scope}\\.(${extensions.join('|')})$ { types { } default_type ${type}; }`,
    )
    .join('\n');
}

/** The types the policy sends with `; charset=utf-8` (nginx adds it to these only). */
function charsetTypes(): string {
  const types = new Set<string>();
  for (const extension of ['php', ...TYPED_EXTENSIONS]) {
    const type = contentTypeFor(`x.${extension}`) ?? '';
    if (/;\s*charset=utf-8$/i.test(type) && !type.startsWith('text/html'))
      types.add(type.split(';')[0] as string);
  }
  return [...types].join(' ');
}

export async function renderNginxSite(options: NginxSiteOptions): Promise<string> {
  for (const path of WORKER_PATHS) {
    if (TYPED_EXTENSIONS.some((extension) => path.endsWith(`.${extension}`)))
      throw new Error(`worker path ${path} would be served as a static file by a type location`);
  }
  const assetKey = encoded('asset', false);
  const values: Record<string, string> = {
    __PAYWALL__: upstreamValue(options.paywallUpstream),
    __LISTEN__: listenValue(options.listen),
    __SERVER_NAME__: serverNameValue(options.serverName ?? '_'),
    __ROOT__: rootValue(options.root),
    __DEFAULT_ASSET__: DEFAULT_REASONING_ASSET,
    // The first `asset` parameter, its name possibly percent-encoded, as the policy's URL parser finds it.
    __ASSET_ARG__: `"~^(?:[^&]*&)*?${assetKey}(?:=(?<emi_asset_value>[^&]*))?(?:&|$)" "=$emi_asset_value";`,
    // nginx cannot decode or upper-case a variable: one case-insensitive pattern per asset, each character
    // plain or percent-encoded.
    __REASONING_MAP__: TRACKED_ASSETS.map(
      (asset) => `    "~*^=${encoded(asset, true)}$" /${reasoningFileFor(asset)};`,
    ).join('\n'),
    __WORKER_ALTERNATION__: [...WORKER_PATHS.map(regexEscape), `${regexEscape(PUBLISHER_PREFIX)}.*`].join(
      '|',
    ),
    __CHARSET_TYPES__: charsetTypes(),
    __TYPE_LOCATIONS__: typeLocations('        '),
    // Under / the publishers' paths (/p/...) belong to the worker's location, checked after these.
    __TYPE_LOCATIONS_SITE__: typeLocations('        ', `^(?!${regexEscape(PUBLISHER_PREFIX)}).*`),
    __ALLOWED_METHODS__: ALLOWED_METHODS,
    __ALLOWED_METHODS_REGEX__: ALLOWED_METHODS.split(/,\s*/).join('|'),
    __POST_METHODS__: POST_METHODS,
    __POST_ALTERNATION__: postAlternation(),
    __PAYWALL_READ_TIMEOUT__: String(PAYWALL_READ_TIMEOUT_SECONDS),
    __METHOD_NOT_ALLOWED_JSON__: nginxQuoted(methodNotAllowedError()),
    __PAYWALL_FAILURE_LOCATIONS__: [502, 503, 504]
      .map((status) =>
        [
          `    location @emi_paywall_${status} {`,
          '        default_type application/json;',
          siteHeaders('        '),
          `        add_header Cache-Control "${NO_STORE}" always;`,
          `        add_header Retry-After ${RETRY_AFTER_SECONDS} always;`,
          '        if ($emi_paywall_reached = 0) {',
          `            return 503 '${nginxQuoted(paywallDownError())}';`,
          '        }',
          `        return ${status} '${nginxQuoted(paywallOutcomeUnknownError())}';`,
          '    }',
        ].join('\n'),
      )
      .join('\n\n'),
    __STATUS_PATH__: STATUS_PATH,
    __CACHE_SECONDS__: String(CACHE_SECONDS),
    __BUYER_CONFIG_PATH__: regexEscape(BUYER_CONFIG_PATH),
    __HASHED_CHUNK_PATTERN__: HASHED_CHUNK_PATTERN,
    __IMMUTABLE_CACHE__: IMMUTABLE_CACHE,
    __ENTRY_SCRIPTS__: ENTRY_SCRIPTS.map(regexEscape).join('|'),
    __REVALIDATE_CACHE__: REVALIDATE_CACHE,
    __NO_STORE__: NO_STORE,
    __PREFLIGHT_MAX_AGE__: String(PREFLIGHT_MAX_AGE_SECONDS),
    __SITE_HEADERS__: siteHeaders('    '),
    __SITE_HEADERS_NESTED__: siteHeaders('        '),
    __INVALID_ASSET_JSON__: nginxQuoted(invalidAssetError()),
    __NOT_FOUND_JSON__: nginxQuoted(notFoundError()),
  };
  const template = await readFile(TEMPLATE, 'utf8');
  return template.replace(/__[A-Z_]+__/g, (token) => {
    const value = values[token];
    if (value === undefined) throw new Error(`unknown placeholder ${token} in the nginx template`);
    return value;
  });
}
