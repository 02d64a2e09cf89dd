// `npm run render:deploy [-- --check]`: writes the static hosts' rule files (deploy/netlify/_headers, _redirects
// and the invalid-asset function) from the delivery policy; with --check, only says whether the committed files are up to date.
import { readFile, writeFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import {
  renderInvalidAssetFunction,
  renderNetlifyHeaders,
  renderNetlifyRedirects,
} from '../deploy/netlify/render.ts';

export const RENDERED_FILES: ReadonlyArray<readonly [string, () => string]> = [
  ['deploy/netlify/_headers', renderNetlifyHeaders],
  ['deploy/netlify/_redirects', renderNetlifyRedirects],
  ['deploy/netlify/functions/invalid-asset.mjs', renderInvalidAssetFunction],
];

const root = new URL('../', import.meta.url);
const check = process.argv.includes('--check');
let stale = 0;
for (const [file, render] of RENDERED_FILES) {
  const path = fileURLToPath(new URL(file, root));
  const wanted = render();
  const current = await readFile(path, 'utf8').catch(() => null);
  if (current === wanted) continue;
  if (check) {
    console.error(`${file} is not what the delivery policy renders: run npm run render:deploy`);
    stale += 1;
  } else {
    await writeFile(path, wanted);
    console.log(`wrote ${file}`);
  }
}
process.exitCode = stale ? 1 : 0;
