// The folder `emi serve --dir` is asked to serve, checked before anything starts: a folder that is not there (a
// typo, a build never made) would otherwise be served as a site that answers 404 to everything.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { folderProblem, usageError } from '../cli-options.ts';

/**
 * Throws a usage error (exit code 2) unless `dir` is a folder; returns a line to warn with when it holds no
 * index.html (not built yet: an `emi build` may still fill it, the server reads every file when it is asked for),
 * else null.
 */
export function checkServedFolder(dir: string): string | null {
  const problem = folderProblem(dir);
  if (problem === 'missing') {
    throw usageError(
      `nothing to serve: folder ${dir} does not exist (--dir); run emi build --out ${dir} first, ` +
        'or give --dir the folder emi build wrote to',
    );
  }
  if (problem) {
    throw usageError(
      `nothing to serve: ${dir} is not a folder (--dir); give --dir the folder emi build wrote to`,
    );
  }
  if (existsSync(join(dir, 'index.html'))) return null;
  return `${dir} has no index.html (not built yet?): its pages answer 404 until emi build --out ${dir} builds it`;
}
