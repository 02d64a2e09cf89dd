// Runs the paywall worker on Node (used by `emi paywall`; `emi serve` mounts the same app on its own origin).
import { createPaywallApp } from './app.ts';
import type { PaywallApp, PaywallAppOptions, PaywallConfig } from './app.ts';
import { listen } from './node-listen.ts';

export interface PaywallServerOptions extends PaywallConfig {
  port: number;
  host?: string;
}

export interface PaywallServer {
  url: string;
  app: PaywallApp;
  close(): Promise<void>;
}

export async function startPaywallServer(
  options: PaywallServerOptions,
  appOptions: PaywallAppOptions = {},
): Promise<PaywallServer> {
  const { port, host = '127.0.0.1', ...config } = options;
  const app = createPaywallApp(config, appOptions); // throws before listening on an invalid payee
  const { url, close } = await listen(app, port, host);
  return { url, app, close };
}
