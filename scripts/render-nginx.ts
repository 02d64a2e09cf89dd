// `npm run render:nginx -- --root /srv/emi/dist [--listen 80] [--paywall 127.0.0.1:8402] [--server-name NAME]`
// prints the nginx server configuration rendered from the delivery policy (put it in /etc/nginx/conf.d/).
import { parseArgs } from 'node:util';
import { DEFAULT_PAYWALL_UPSTREAM, renderNginxSite } from '../deploy/nginx/render.ts';

const { values } = parseArgs({
  options: {
    root: { type: 'string' },
    listen: { type: 'string', default: '80' },
    paywall: { type: 'string', default: DEFAULT_PAYWALL_UPSTREAM },
    'server-name': { type: 'string' },
  },
});
if (!values.root) {
  console.error('render:nginx: --root (the absolute path of the built dist/ folder) is required');
  process.exit(2);
}
process.stdout.write(
  await renderNginxSite({
    root: values.root,
    listen: values.listen,
    paywallUpstream: values.paywall,
    serverName: values['server-name'],
  }),
);
