// `npm run upload:r2 -- --paid paid [--local DIR]`: uploads the generator's paid files to the Worker's R2 bucket
// (deploy/cloudflare/wrangler.toml). Run it after every generation; without --local it writes to the real bucket
// of the account wrangler is logged in to.
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { uploadPaidFiles } from '../deploy/cloudflare/run.ts';

const { values } = parseArgs({
  options: { paid: { type: 'string', default: 'paid' }, local: { type: 'string' } },
});
const paid = resolve(values.paid);
await uploadPaidFiles(paid, values.local ? { persistTo: resolve(values.local) } : { remote: true });
console.log(
  `uploaded the paid files of ${paid} to R2${values.local ? ` (local state ${values.local})` : ''}`,
);
