// The systemd unit's `emi paywall --production` refuses to start without a payee and a facilitator: an empty
// /etc/emi/paywall.env used to start the development facilitator with a throwaway payee, whose /x402/health said ok.
import { spawn } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import algosdk from 'algosdk';
import { describe, expect, it } from 'vitest';

const ROOT = join(import.meta.dirname, '..');

/** The unit's ExecStart arguments after `node`, on port 0 so that a worker that does start takes a free port. */
async function unitArguments(): Promise<string[]> {
  const unit = await readFile(join(ROOT, 'deploy/systemd/emi-paywall.service'), 'utf8');
  const [node, ...args] = /^ExecStart=(.+)$/m.exec(unit)![1]!.split(/\s+/);
  expect(node).toMatch(/node$/);
  return args.map((arg, i) => (args[i - 1] === '--port' ? '0' : arg));
}

/** Runs `args` as the unit would with `env` as its environment file; the exit code and output once it ends. */
function run(args: string[], env: Record<string, string>) {
  const child = spawn(process.execPath, args, {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? '', EMI_BASE_URL: 'https://emi.example.org', ...env },
  });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  // A worker that starts is stopped once it says it listens: the test then fails on its exit code.
  child.stdout.on('data', () => {
    if (output.includes('listening on')) child.kill('SIGTERM');
  });
  return new Promise<{ code: number | null; output: string }>((resolve) =>
    child.once('close', (code) => resolve({ code, output })),
  );
}

describe('emi paywall --production (the systemd unit)', () => {
  it('refuses to start with an empty environment file, naming both settings', async () => {
    const { code, output } = await run(await unitArguments(), {});
    expect(output).not.toMatch(/development facilitator|throwaway/);
    expect(code).toBe(2);
    expect(output).toMatch(
      /--production needs a payee \(EMI_PAYTO.*\) and a facilitator URL \(EMI_FACILITATOR_URL/,
    );
  });

  it('refuses a payee without a facilitator', async () => {
    const payTo = algosdk.generateAccount().addr.toString();
    const { code, output } = await run(await unitArguments(), { EMI_PAYTO: payTo });
    expect(code).toBe(2);
    expect(output).toMatch(/--production needs a facilitator URL/);
    expect(output).not.toMatch(/needs a payee/);
  });
});
