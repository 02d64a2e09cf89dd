// Resolves a URL path to a file under the served root, refusing anything that would leave it.
import { stat } from 'node:fs/promises';
import { extname, join, normalize, sep } from 'node:path';

const CONTENT_TYPES: Record<string, string> = {
  '.php': 'application/json; charset=utf-8', // the spec's endpoints are static JSON at .php paths
  '.json': 'application/json; charset=utf-8',
  '.html': 'text/html; charset=utf-8',
  '.txt': 'text/plain; charset=utf-8',
  '.xml': 'application/xml; charset=utf-8',
  '.yaml': 'application/yaml; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.webmanifest': 'application/manifest+json',
};

export const contentTypeFor = (file: string): string =>
  CONTENT_TYPES[extname(file).toLowerCase()] ?? 'application/octet-stream';

/** Returns the absolute file for a URL path, or null when it is outside the root or not a file. */
export async function resolveStaticFile(root: string, urlPath: string): Promise<string | null> {
  let decoded: string;
  try {
    decoded = decodeURIComponent(urlPath);
  } catch {
    return null;
  }
  if (decoded.includes('\0')) return null;
  const relative = normalize(decoded.endsWith('/') ? `${decoded}index.html` : decoded).replace(
    /^([/\\])+/,
    '',
  );
  if (relative.split(sep).includes('..')) return null;
  const candidate = join(root, relative);
  try {
    const info = await stat(candidate);
    if (info.isFile()) return candidate;
    if (info.isDirectory()) {
      const index = join(candidate, 'index.html');
      return (await stat(index).catch(() => null))?.isFile() ? index : null;
    }
  } catch {
    return null;
  }
  return null;
}
