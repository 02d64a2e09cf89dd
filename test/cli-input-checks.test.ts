// Command-line input the commands must check: explicit options win over the environment and empty variables mean
// unset; usage mistakes are one line and exit code 2 before anything is written; a port in use ends the process;
// impossible or far-future --as-of times, bad base URLs and empty site folders are refused; read-only folders are
// fine for commands that only read them; a symlinked output folder gets links that lead somewhere.
import { spawn } from 'node:child_process';
import { mkdir, mkdtemp, readFile, readdir, readlink, rm, symlink, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import type { Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Command } from 'commander';
import * as z from 'zod';
import { afterAll, describe, expect, it } from 'vitest';
import { oneLine, parseAsOfAt } from '../generator/cli-options.ts';
import { createProgram } from '../generator/cli.ts';
import { checkCommandConfiguration } from '../generator/config-file.ts';
import { summarise } from '../generator/cycle.ts';
import type { RunReport } from '../generator/pipeline.ts';
import { publishGeneration, realFs } from '../generator/publish/generations.ts';
import type { PublishFs, ServedLink } from '../generator/publish/generations.ts';
import { freePort } from './free-port.ts';

const EMI = join(import.meta.dirname, '..', 'bin', 'emi.js');

interface Finished {
  code: number | null;
  stdout: string;
  stderr: string;
}

interface Started {
  write(line: string): void;
  end(): void;
  /** Resolves with everything printed so far once stdout or stderr matches. */
  waitFor(pattern: RegExp): Promise<string>;
  stop(): void;
  done: Promise<Finished>;
}

/**
 * `emi args` in `cwd` with the EMI_* variables this machine may have set removed, then `env` on top: a value of
 * '' sets the variable empty, as `EMI_STATE_DIR= emi ...` does.
 */
function start(cwd: string, args: string[], env: Record<string, string> = {}): Started {
  const childEnv: NodeJS.ProcessEnv = Object.fromEntries(
    Object.entries(process.env).filter(([name]) => !name.startsWith('EMI_')),
  );
  const child = spawn(process.execPath, [EMI, ...args], { cwd, env: { ...childEnv, ...env } });
  let stdout = '';
  let stderr = '';
  const waiters = new Set<() => void>();
  const update = () => waiters.forEach((check) => check());
  child.stdout.on('data', (chunk: Buffer) => {
    stdout += chunk.toString();
    update();
  });
  child.stderr.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
    update();
  });
  const done = new Promise<Finished>((resolve) =>
    child.on('close', (code) => resolve({ code, stdout, stderr })),
  );
  return {
    write: (line) => child.stdin.write(`${line}\n`),
    end: () => child.stdin.end(),
    stop: () => child.kill('SIGTERM'),
    done,
    waitFor: (pattern) =>
      new Promise<string>((resolve, reject) => {
        const check = () => {
          if (!pattern.test(stdout + stderr)) return;
          waiters.delete(check);
          resolve(stdout + stderr);
        };
        waiters.add(check);
        check();
        void done.then(() => reject(new Error(`emi ended without printing ${pattern}: ${stdout}${stderr}`)));
      }),
  };
}

function run(cwd: string, args: string[], env: Record<string, string> = {}): Promise<Finished> {
  const started = start(cwd, args, env);
  started.end();
  return started.done;
}

/** The lines on stderr, without the build-freshness notice and commander's pointer to --help. */
const errorLines = (result: Finished): string[] =>
  result.stderr
    .split('\n')
    .filter((l) => l && !l.startsWith('(run with --help') && !l.includes('build/ is out of date'));

function expectUsageError(result: Finished, pattern: RegExp): void {
  expect(result.code, result.stderr).toBe(2);
  const lines = errorLines(result);
  expect(lines).toHaveLength(1);
  expect(lines[0]).toMatch(pattern);
}

const roots: string[] = [];
async function scratch(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'emi-input-'));
  roots.push(dir);
  return dir;
}
afterAll(async () => {
  await Promise.all(roots.map((dir) => rm(dir, { recursive: true, force: true })));
});

function occupy(port: number): Promise<Server> {
  const server = createServer();
  return new Promise((resolve) => server.listen(port, '127.0.0.1', () => resolve(server)));
}

describe('emi mcp', () => {
  const initialize = JSON.stringify({
    jsonrpc: '2.0',
    id: 1,
    method: 'initialize',
    params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'test', version: '1' } },
  });

  it('answers without EMI_BASE_URL, and ends when the client closes stdin', async () => {
    const dir = await scratch();
    await mkdir(join(dir, 'dist')); // the folder it serves (--dir): not built, which it says on stderr
    const mcp = start(dir, ['mcp']);
    mcp.write(initialize);
    await mcp.waitFor(/"id":1/);
    mcp.end();
    const result = await mcp.done;
    expect(result.code, result.stderr).toBe(0);
    expect(JSON.parse(result.stdout.trim().split('\n')[0]!)).toMatchObject({
      id: 1,
      result: { serverInfo: { name: 'educational-market-intelligence' } },
    });
    expect(result.stderr).not.toMatch(/not a URL/);
  });

  it('sells at --base-url, not at EMI_BASE_URL: the option wins over the environment', async () => {
    const dir = await scratch();
    // Paid files of the current minute, so that the paywall offers them (402) rather than refusing stale ones.
    expect((await run(dir, ['generate'])).code).toBe(0);
    await mkdir(join(dir, 'dist'));
    const mcp = start(dir, ['mcp', '--base-url', 'http://explicit.example'], {
      EMI_BASE_URL: 'http://environment.example',
    });
    mcp.write(initialize);
    await mcp.waitFor(/"id":1/);
    mcp.write(JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }));
    mcp.write(
      JSON.stringify({
        jsonrpc: '2.0',
        id: 2,
        method: 'tools/call',
        params: { name: 'paid_market_regime', arguments: {} },
      }),
    );
    await mcp.waitFor(/"id":2/);
    mcp.end();
    const result = await mcp.done;
    const answer = result.stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { id?: number; result?: Record<string, unknown> })
      .find((message) => message.id === 2);
    const required = answer?.result?.structuredContent as { resource?: { url?: string } } | undefined;
    expect(required?.resource?.url).toBe('http://explicit.example/api/x402-market-regime.php');
  });
});

describe('emi paywall', () => {
  it('ends with one line, and leaves the development facilitator closed, when its port is in use', async () => {
    const dir = await scratch();
    const [port, devPort] = [await freePort(), await freePort()];
    const taken = await occupy(port);
    try {
      const result = await run(dir, [
        'paywall',
        '--port',
        String(port),
        '--dev-facilitator-port',
        String(devPort),
      ]);
      expect(result.code).toBe(1);
      expect(errorLines(result)).toEqual([
        `emi: port ${port} on 127.0.0.1 is in use (another emi paywall, serve or up?): choose another with --port`,
      ]);
      // The facilitator it had started is closed again: its port is free.
      (await occupy(devPort)).close();
    } finally {
      taken.close();
    }
  });

  it("names --dev-facilitator-port when the development facilitator's port is in use", async () => {
    const dir = await scratch();
    const devPort = await freePort();
    const taken = await occupy(devPort);
    try {
      const result = await run(dir, ['paywall', '--port', '0', '--dev-facilitator-port', String(devPort)]);
      expect(result.code).toBe(1);
      expect(errorLines(result)).toHaveLength(1);
      expect(errorLines(result)[0]).toMatch(/port \d+ is in use .*--dev-facilitator-port$/);
    } finally {
      taken.close();
    }
  });
});

describe('emi serve and emi paywall name what is wrong with their folders and ports', () => {
  it("emi serve names the development facilitator's port in use, and the option that chooses another", async () => {
    const dir = await scratch();
    await mkdir(join(dir, 'dist'));
    await writeFile(join(dir, 'dist', 'index.html'), '<!doctype html><title>built</title>');
    const devPort = await freePort();
    const taken = await occupy(devPort);
    try {
      const result = await run(dir, [
        'serve',
        '--dir',
        'dist',
        '--port',
        '0',
        '--dev-facilitator-port',
        String(devPort),
      ]);
      expect(result.code).toBe(1);
      expect(errorLines(result)).toEqual([
        `emi: the development facilitator's port ${devPort} is in use (another emi serve or up?): choose another ` +
          'with --dev-facilitator-port',
      ]);
    } finally {
      taken.close();
    }
  });

  it('emi paywall --site naming no folder is a usage mistake, not a worker without /mcp', async () => {
    const dir = await scratch();
    const result = await run(dir, [
      'paywall',
      '--port',
      '0',
      '--dev-facilitator-port',
      '0',
      '--site',
      'nowhere',
    ]);
    expect(result.code).toBe(2);
    expect(errorLines(result)).toEqual([
      'emi: no MCP endpoint or storefront to serve: folder nowhere does not exist (--site); run emi build --out ' +
        'nowhere first, or give --site the folder emi build wrote to',
    ]);
  });
});

describe('--as-of', () => {
  const NOW = Date.parse('2026-11-25T12:00:00Z');

  it('is refused when the date written is not the date parsed', () => {
    for (const value of [
      '2026-02-30T00:00:00Z',
      '2026-02-29T00:00:00Z',
      '2026-04-31T12:00Z',
      '2026-01-01T24:00:00Z',
    ]) {
      expect(() => parseAsOfAt(value, NOW), value).toThrow(/not a real date and time/);
    }
    expect(parseAsOfAt('2024-02-29T00:00:00Z', NOW)).toBe(Date.parse('2024-02-29T00:00:00Z'));
    expect(parseAsOfAt('2026-03-01T00:30:00+01:00', NOW)).toBe(Date.parse('2026-02-28T23:30:00Z'));
    expect(parseAsOfAt('2026-11-21T12:00:00.250Z', NOW)).toBe(Date.parse('2026-11-21T12:00:00.250Z'));
  });

  it('is refused more than 24 hours after the clock', () => {
    expect(parseAsOfAt('2026-11-26T12:00:00Z', NOW)).toBe(NOW + 24 * 3_600_000);
    expect(() => parseAsOfAt('2026-11-26T12:01:00Z', NOW)).toThrow(/in the future: .*at most 24 hours/);
    expect(() => parseAsOfAt('2062-11-25T12:00:00Z', NOW)).toThrow(/in the future/);
  });

  it('emi generate refuses an impossible or far-future time with one line, exit 2, nothing written', async () => {
    for (const [value, line] of [
      ['2026-02-30T00:00:00Z', /"2026-02-30T00:00:00Z" is not a real date and time/],
      [
        `${new Date().getUTCFullYear() + 36}-01-01T00:00:00Z`,
        /is in the future: --as-of may be at most 24 hours/,
      ],
    ] as const) {
      const dir = await scratch();
      expectUsageError(await run(dir, ['generate', '--as-of', value]), line);
      expect(await readdir(dir)).toEqual([]);
    }
  });

  it('is not an option of emi schedule, whose runs describe the current minute', async () => {
    const dir = await scratch();
    const help = await run(dir, ['schedule', '--help']);
    expect(help.stdout).not.toContain('--as-of');
    const result = await run(dir, [
      'schedule',
      '--as-of',
      '2026-11-21T12:00:00Z',
      '--base-url',
      'https://x.example',
    ]);
    expect(result.code).not.toBe(0);
    expect(errorLines(result)).toEqual(["error: unknown option '--as-of'"]);
    expect(await readdir(dir)).toEqual([]);
  });
});

describe('a failed run in one line', () => {
  const report = (error: string): RunReport => ({
    status: 'failed',
    mode: 'simulated',
    seed: 42,
    as_of: '2026-11-21T12:00:00.000Z',
    started_at: '2026-11-21T12:00:00.000Z',
    finished_at: '2026-11-21T12:00:01.000Z',
    duration_ms: 1000,
    files_written: 0,
    issues: [],
    error,
  });

  it('gives the first problem of a zod error, not its first line "["', () => {
    const parsed = z
      .object({ round: z.object({ end: z.iso.datetime() }), next_update_due: z.iso.datetime() })
      .safeParse({ round: { end: '+010000-01-01T00:00:00Z' }, next_update_due: 'later' });
    const message = (parsed.error as z.ZodError).message;
    expect(message.split('\n')[0]).toBe('[');
    expect(summarise(report(message))).toBe(
      'generate failed: round.end: Invalid ISO datetime (and 1 more problem(s)) (the last good files were left in place)',
    );
    expect(oneLine(`refused: ${message}`)).toBe(
      'refused: round.end: Invalid ISO datetime (and 1 more problem(s))',
    );
    expect(oneLine('first line\nsecond line')).toBe('first line');
  });
});

describe('usage mistakes with the source', () => {
  it.each([
    [['generate', '--record', 'rec'], /^emi: --record applies to live runs only \(--source live\)$/],
    [['generate', '--replay', 'rec'], /^emi: --replay needs --source replay$/],
    [['generate', '--source', 'replay'], /^emi: --source replay needs --replay DIR/],
    [
      ['up', '--source', 'replay', '--port', '0', '--dev-facilitator-port', '0'],
      /^emi: --source replay needs --replay DIR/,
    ],
  ])('emi %j: one line, exit 2, no run recorded', async (args, line) => {
    const dir = await scratch();
    expectUsageError(await run(dir, args), line);
    // No failed run in site/status.json or var/last-run.json: nothing at all.
    expect(await readdir(dir)).toEqual([]);
  });
});

describe('folders a command only reads', () => {
  /** The command `args` names, with its options parsed, as the configuration hook receives it. */
  function parsed(args: string[]): Command {
    const program = createProgram();
    const command = program.commands.find((c) => c.name() === args[0])!;
    command.parseOptions(args.slice(1));
    return command;
  }

  it('emi serve does not ask for a writable --paid folder; emi generate does', async () => {
    const dir = await scratch();
    await writeFile(join(dir, 'file'), 'not a folder');
    const unwritable = join(dir, 'file', 'paid');
    await expect(
      checkCommandConfiguration(parsed(['serve', '--paid', unwritable]), {}),
    ).resolves.toBeUndefined();
    await expect(checkCommandConfiguration(parsed(['generate', '--paid', unwritable]), {})).rejects.toThrow(
      /paid folder .* is not writable/,
    );
  });

  it('emi serve starts on a --paid folder it cannot write to', async () => {
    const dir = await scratch();
    await writeFile(join(dir, 'file'), 'not a folder');
    await mkdir(join(dir, 'dist'));
    const serve = start(dir, [
      'serve',
      '--port',
      '0',
      '--dev-facilitator-port',
      '0',
      '--paid',
      join(dir, 'file', 'paid'),
    ]);
    try {
      await serve.waitFor(/site: http:\/\/127\.0\.0\.1:\d+\//);
    } finally {
      serve.stop();
      await serve.done;
    }
  });
});

describe('emi build', () => {
  it.each([['ftp://x.example'], ['foo'], ['https://']])(
    'refuses --base-url %s in one line and writes nothing',
    async (baseUrl) => {
      const dir = await scratch();
      const result = await run(dir, ['build', '--base-url', baseUrl]);
      expect(result.code).toBe(2);
      expect(errorLines(result)).toEqual([
        `emi: base URL "${baseUrl}" is not an absolute http(s) URL: use one such as https://your.site (--base-url or EMI_BASE_URL)`,
      ]);
      expect(await readdir(dir)).toEqual([]);
    },
  );

  it('refuses a --site folder without the templates, and leaves dist/ alone', async () => {
    const dir = await scratch();
    expect((await run(dir, ['generate', '--as-of', '2026-11-21T12:00:00Z'])).code).toBe(0);
    await mkdir(join(dir, 'empty'));
    const result = await run(dir, ['build', '--site', 'empty', '--base-url', 'https://x.example']);
    // A bad option value (README: exit 2 for a bad option value), said before anything is written.
    expect(result.code).toBe(2);
    expect(errorLines(result)).toHaveLength(1);
    expect(errorLines(result)[0]).toMatch(
      /^emi: refusing to build: .*empty is not a site folder \(no index\.njk, /,
    );
    expect((await readdir(dir)).sort()).toEqual(['empty', 'paid', 'site', 'var']);
  });

  it('no longer lists --state, which it never read, and still accepts it', async () => {
    const dir = await scratch();
    expect((await run(dir, ['build', '--help'])).stdout).not.toContain('--state');
    const result = await run(dir, ['build', '--state', 'var', '--base-url', 'foo']);
    expect(errorLines(result)[0]).toMatch(/base URL "foo"/); // past the options: --state was taken
  });
});

describe('empty environment variables mean unset', () => {
  it('EMI_STATE_DIR= keeps the state in var/, not in the working folder', async () => {
    const dir = await scratch();
    const result = await run(dir, ['generate', '--as-of', '2026-11-21T12:00:00Z'], { EMI_STATE_DIR: '' });
    expect(result.code, result.stderr).toBe(0);
    expect((await readdir(dir)).sort()).toEqual(['paid', 'site', 'var']);
    expect(await readdir(join(dir, 'var'))).toContain('arena.sqlite');
  });

  it('EMI_PAID_DIR= leaves the paywall reading paid/', async () => {
    const dir = await scratch();
    const help = await run(dir, ['paywall', '--help'], { EMI_PAID_DIR: '' });
    expect(help.stdout).toContain('(default: "paid")');
    expect(help.stdout).not.toContain('(default: "")');
  });

  it('EMI_CONFIG= reads no configuration file', async () => {
    const dir = await scratch();
    const result = await run(dir, ['generate', '--as-of', '2026-11-21T12:00:00Z'], { EMI_CONFIG: '' });
    expect(result.code, result.stderr).toBe(0);
  });
});

describe('an output folder that is itself a symlink', () => {
  it('emi generate makes site/api and site/arena lead to the published files', async () => {
    const dir = await scratch();
    await mkdir(join(dir, 'srv', 'www'), { recursive: true });
    await symlink(join('srv', 'www'), join(dir, 'site'));
    const result = await run(dir, ['generate', '--as-of', '2026-11-21T12:00:00Z']);
    expect(result.code, result.stderr).toBe(0);
    const regime = JSON.parse(
      await readFile(join(dir, 'site', 'api', 'market-regime.php'), 'utf8'),
    ) as object;
    expect(regime).toHaveProperty('success', true);
    expect(await readdir(join(dir, 'site', 'arena'))).not.toEqual([]);
    expect(await readlink(join(dir, 'srv', 'www', 'api'))).toBe('../../var/published/current/api');
  });

  it('a link that leads nowhere after the switch fails the commit and serves the previous generation', async () => {
    const dir = await scratch();
    const store = join(dir, 'var', 'published');
    const links: ServedLink[] = [
      { path: join(dir, 'site', 'api'), entry: 'api' },
      { path: join(dir, 'paid'), entry: 'paid' },
    ];
    const fill =
      (run: number) => async (generation: { write(file: string, data: string): Promise<void> }) => {
        await generation.write('api/a.php', `{"run":${run}}`);
        await generation.write('paid/b.json', `{"run":${run}}`);
      };
    await publishGeneration(store, links, fill(1));
    const served = await readlink(join(store, 'current'));
    // The link is made again (it went missing), by a file system that points it at nothing.
    await rm(join(dir, 'site', 'api'));
    const astray: PublishFs = {
      ...realFs,
      symlink: ((target: string, path: string) =>
        realFs.symlink(
          path.endsWith('.link') ? `nowhere/${String(target)}` : target,
          path,
        )) as PublishFs['symlink'],
    };
    await expect(publishGeneration(store, links, fill(2), astray)).rejects.toThrow(
      /site\/api does not lead to the published files after the switch/,
    );
    expect(await readlink(join(store, 'current'))).toBe(served);
    expect(await readFile(join(dir, 'paid', 'b.json'), 'utf8')).toBe('{"run":1}');
  });
});
