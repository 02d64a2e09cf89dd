// Resolves a URL path to a file under the served root, refusing anything that would leave it.
import { stat } from 'node:fs/promises';
import { join, normalize, sep } from 'node:path';

/** The file a URL path names under the root: itself, or a folder's index.html. Null when outside or absent. */
async function locate(root: string, urlPath: string): Promise<{ file: string; folder: boolean } | null> {
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
    if (info.isFile()) return { file: candidate, folder: false };
    if (info.isDirectory()) {
      const index = join(candidate, 'index.html');
      return (await stat(index).catch(() => null))?.isFile() ? { file: index, folder: true } : null;
    }
  } catch {
    return null;
  }
  return null;
}

/** Returns the absolute file for a URL path, or null when it is outside the root or not a file. */
export async function resolveStaticFile(root: string, urlPath: string): Promise<string | null> {
  return (await locate(root, urlPath))?.file ?? null;
}

/** What a GET of a URL path gets: a file, a redirect to the folder's slashed URL, or nothing (null). */
export type StaticAnswer = { kind: 'file'; file: string } | { kind: 'redirect'; location: string } | null;

/**
 * Like `resolveStaticFile`, but a folder asked for without its trailing slash (`/x402-buyer`) is a redirect to
 * `/x402-buyer/` with the query string kept (`search`, with or without its "?"), as nginx and the other hosts
 * answer: served under the slashless URL, the page's relative links (`app.js`, `buyer.css`, `config.json`, `../`)
 * would resolve one folder too high. Answer it with a 301 and `Location: location`.
 */
export async function resolveStaticRequest(
  root: string,
  urlPath: string,
  search = '',
): Promise<StaticAnswer> {
  const found = await locate(root, urlPath);
  if (!found) return null;
  if (found.folder && !urlPath.endsWith('/')) {
    const query = search === '' || search === '?' ? '' : search.startsWith('?') ? search : `?${search}`;
    return { kind: 'redirect', location: `${slashed(urlPath)}${query}` };
  }
  return { kind: 'file', file: found.file };
}

/**
 * The path with one slash added, kept relative to this host: a path starting with `//` (or `/\`) would read as
 * another host in a Location header, so its leading slashes collapse to one.
 */
const slashed = (urlPath: string): string => `${urlPath.replace(/^[/\\]+/, '/')}/`;
