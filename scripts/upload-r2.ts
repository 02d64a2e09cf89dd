// `npm run upload:r2 -- --paid paid [--local DIR]`: uploads the generator's paid files to the Worker's R2 bucket
// (deploy/cloudflare/wrangler.toml). Run it after every generation; without --local it writes to the real bucket
// of the account wrangler is logged in to.
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { uploadPaidFiles } from '../deploy/cloudflare/run.ts';
import { PAID_RESOURCES } from '../schemas/resources.ts';

const { values } = (() => {
  try {
    return parseArgs({
      options: { paid: { type: 'string', default: 'paid' }, local: { type: 'string' } },
    });
  } catch (error) {
    // A mistyped option: one line and the usage, not node's stack trace.
    console.error(
      `upload:r2: ${(error as Error).message.split('\n')[0]} (usage: npm run upload:r2 -- --paid paid [--local DIR])`,
    );
    process.exit(2);
  }
})();
const paid = resolve(values.paid);
// A folder without the paid files (a mistyped --paid, no run yet) is a usage mistake, said before wrangler starts.
const missing = PAID_RESOURCES.filter(({ file }) => !existsSync(join(paid, file))).map(({ file }) => file);
if (missing.length > 0) {
  console.error(
    `upload:r2: ${paid} lacks ${missing.length === PAID_RESOURCES.length ? 'every paid file' : missing.join(', ')}: ` +
      'run `npx emi generate` first, or give its --paid folder',
  );
  process.exit(2);
}
await uploadPaidFiles(paid, values.local ? { persistTo: resolve(values.local) } : { remote: true }).catch(
  (error: unknown) => {
    // wrangler's own words (its output is in the message), without this script's stack frames.
    console.error(`upload:r2: ${(error as Error).message}`);
    process.exit(1);
  },
);
console.log(
  `uploaded the paid files of ${paid} to R2${values.local ? ` (local state ${values.local})` : ''}`,
);
