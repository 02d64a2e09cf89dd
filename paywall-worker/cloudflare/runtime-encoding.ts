// Whether the Workers runtime will compress an answer of the Worker after it is returned: Cloudflare's edge (and
// `wrangler dev`, which copies its rule) compresses the content types below with br or gzip when the client's
// Accept-Encoding prefers one of them to identity. The Worker needs to know it before it answers: a strong ETag names
// one sequence of bytes (RFC 9110 8.8.3), so an answer that will be compressed gets a weak one, as nginx's gzip gives.

/**
 * The types Cloudflare compresses (developers.cloudflare.com/speed/optimization/content/compression/), as wrangler's
 * entry worker lists them.
 */
const COMPRESSED_TYPES: ReadonlySet<string> = new Set([
  'text/html',
  'text/richtext',
  'text/plain',
  'text/css',
  'text/x-script',
  'text/x-component',
  'text/x-java-source',
  'text/x-markdown',
  'application/javascript',
  'application/x-javascript',
  'text/javascript',
  'text/js',
  'image/x-icon',
  'image/vnd.microsoft.icon',
  'application/x-perl',
  'application/x-httpd-cgi',
  'text/xml',
  'application/xml',
  'application/rss+xml',
  'application/vnd.api+json',
  'application/x-protobuf',
  'application/json',
  'multipart/bag',
  'multipart/mixed',
  'application/xhtml+xml',
  'font/ttf',
  'font/otf',
  'font/x-woff',
  'image/svg+xml',
  'application/vnd.ms-fontobject',
  'application/ttf',
  'application/x-ttf',
  'application/otf',
  'application/x-otf',
  'application/truetype',
  'application/opentype',
  'application/x-opentype',
  'application/font-woff',
  'application/eot',
  'application/font',
  'application/font-sfnt',
  'application/wasm',
  'application/javascript-binast',
  'application/manifest+json',
  'application/ld+json',
  'application/graphql+json',
  'application/geo+json',
]);

/** One coding of an Accept-Encoding list and its weight (`q`, 1 when absent). */
interface Coding {
  coding: string;
  weight: number;
}

function parseCodings(acceptEncoding: string): Coding[] {
  const codings: Coding[] = [];
  for (const element of acceptEncoding.split(',')) {
    const match = /^\s*([A-Za-z0-9!#$%&'*+.^_`|~-]+)\s*(?:;\s*q\s*=\s*([01](?:\.\d{0,3})?))?\s*$/.exec(
      element,
    );
    if (!match?.[1]) continue;
    codings.push({ coding: match[1].toLowerCase(), weight: match[2] === undefined ? 1 : Number(match[2]) });
  }
  return codings.sort((a, b) => b.weight - a.weight); // stable: equal weights keep the client's order
}

/**
 * Whether an answer of `contentType`, without a Content-Encoding of its own, reaches a client that sent
 * `acceptEncoding` compressed: the client's first acceptable coding, by weight, is br or gzip rather than identity.
 */
export function runtimeCompresses(acceptEncoding: string | null, contentType: string | null): boolean {
  if (!acceptEncoding) return false;
  const type = contentType?.split(';')[0]?.trim().toLowerCase();
  if (type && !COMPRESSED_TYPES.has(type)) return false; // an answer without a type is compressed too
  for (const { coding, weight } of parseCodings(acceptEncoding)) {
    if (weight === 0) continue;
    if (coding === 'br' || coding === 'gzip') return true;
    if (coding === 'identity') return false;
  }
  return false;
}

/** The ETag of an answer the runtime compresses: weak (`W/"x"`), since its bytes are not the file's. */
export const etagForEncoding = (etag: string, compressed: boolean): string =>
  compressed && !etag.startsWith('W/') ? `W/${etag}` : etag;
