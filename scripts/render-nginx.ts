// `npm run render:nginx -- --root /srv/emi/dist [--listen 80] [--paywall 127.0.0.1:8402] [--server-name NAME...]`
// prints the nginx server configuration rendered from the delivery policy (put it in /etc/nginx/conf.d/). A
// mistake in the options is one line on stderr and exit code 2; nothing is printed on stdout then.
import { parseArgs } from 'node:util';
import { DEFAULT_PAYWALL_UPSTREAM, NginxOptionError, renderNginxSite } from '../deploy/nginx/render.ts';

const USAGE =
  'usage: npm run render:nginx -- --root /absolute/path/to/dist [--listen 80] [--paywall 127.0.0.1:8402] ' +
  '[--server-name "emi.example.org www.emi.example.org"]';

function usageError(message: string): never {
  console.error(`render:nginx: ${message} (${USAGE})`);
  process.exit(2);
}

let values: { root?: string; listen: string; paywall: string; 'server-name'?: string };
try {
  ({ values } = parseArgs({
    options: {
      root: { type: 'string' },
      listen: { type: 'string', default: '80' },
      paywall: { type: 'string', default: DEFAULT_PAYWALL_UPSTREAM },
      'server-name': { type: 'string' },
    },
  }));
} catch (error) {
  // ERR_PARSE_ARGS_UNKNOWN_OPTION and the like: their first line says it.
  usageError((error as Error).message.split('\n')[0] as string);
}
if (!values.root) usageError('--root (the absolute path of the built dist/ folder) is required');

try {
  process.stdout.write(
    await renderNginxSite({
      root: values.root,
      listen: values.listen,
      paywallUpstream: values.paywall,
      serverName: values['server-name'],
    }),
  );
} catch (error) {
  if (error instanceof NginxOptionError) usageError(error.message);
  console.error(`render:nginx: ${(error as Error).message.split('\n')[0]}`);
  process.exit(1);
}
