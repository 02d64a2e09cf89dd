// The built folder `emi serve` and `emi mcp` are asked to serve (--dir), checked before anything starts: a folder
// that is not there (a typo, a build never made) would otherwise be served as a site where nothing is found.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { requireFolder } from '../cli-options.ts';

/**
 * Throws a usage error (exit code 2) unless `dir` is a folder; returns a line to warn with when it holds no
 * index.html (not built yet: an `emi build` may still fill it, and every file is read when it is asked for), else
 * null. `unbuilt` says what the server's readers meet meanwhile, e.g. "its pages answer 404".
 */
export function checkServedFolder(dir: string, unbuilt: string): string | null {
  requireFolder(dir, { refusal: 'nothing to serve', option: '--dir', writtenBy: ['emi build', '--out'] });
  if (existsSync(join(dir, 'index.html'))) return null;
  return `${dir} has no index.html (not built yet?): ${unbuilt} until emi build --out ${dir} builds it`;
}
