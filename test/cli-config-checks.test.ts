// Settings and option values the commands must check before they write or start anything (README, "The `emi`
// command": a bad configuration or option value is one line on stderr and exit code 2): the history retention of
// the environment, mistyped EMI_VENUE_URL_* and EMI_SOURCE_ORDER_* names, the folders `emi serve`, `emi mcp` and
// `emi validate` are asked to read, `emi build`'s --site and --published, `emi sources check --source replay`
// without --replay. Also: --state says that EMI_STATE_DIR is its default, and a skipped `emi schedule` tick is one
// plain line of emi's own.
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { configFromEnv, venueUrlEnvName } from '../generator/sources/config.ts';
import { VENUE_IDS } from '../generator/sources/venues.ts';
import { errorLines, expectUsageMistake, startEmi } from './ops-cli.ts';
import type { Finished } from './ops-cli.ts';
import { freePort } from './free-port.ts';

const roots: string[] = [];
async function scratch(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'emi-config-checks-'));
  roots.push(dir);
  return dir;
}
afterAll(async () => {
  await Promise.all(roots.map((dir) => rm(dir, { recursive: true, force: true })));
});

/**
 * The real `emi` in `cwd`, without the EMI_* variables of this machine, with `env` on top. A command still running
 * after `timeoutMs` is killed (a check that let it start, such as `emi schedule` or `emi serve`, would otherwise
 * keep the test waiting).
 */
const start = (cwd: string, args: string[], env: Record<string, string> = {}, timeoutMs = 20_000) =>
  startEmi(cwd, args, env, { timeoutMs });

const emi = (cwd: string, args: string[], env: Record<string, string> = {}): Promise<Finished> =>
  start(cwd, args, env).done;

/** Run folders inside the scratch folder, so that "nothing written" is an empty folder. */
const RUN_FOLDERS = ['--out', 'site', '--paid', 'paid', '--state', 'var'];
/** Any free port: nothing may listen on 8080 or 4021 in the tests. */
const ANY_PORTS = ['--port', '0', '--dev-facilitator-port', '0'];

describe('EMI_HISTORY_RETENTION_DAYS is checked before a run writes or starts anything', () => {
  const commands: Array<[string, string[]]> = [
    ['emi generate', ['generate', ...RUN_FOLDERS]],
    ['emi schedule', ['schedule', ...RUN_FOLDERS, '--dist', 'dist', '--base-url', 'https://emi.test']],
    ['emi up', ['up', ...RUN_FOLDERS, '--dist', 'dist', ...ANY_PORTS, '--backfill-days', '0']],
    ['emi backfill', ['backfill', '--days', '1', '--out', 'site', '--state', 'var']],
  ];
  it.each(
    commands.flatMap(([name, args]) => ['0', 'abc', '-3'].map((value) => [name, value, args] as const)),
  )(
    '%s with EMI_HISTORY_RETENTION_DAYS=%s',
    async (_name, value, args) => {
      const dir = await scratch();
      const run = await emi(dir, [...args], { EMI_HISTORY_RETENTION_DAYS: value });
      expectUsageMistake(
        run,
        new RegExp(`^emi: EMI_HISTORY_RETENTION_DAYS must be a positive integer of days: "${value}"$`),
      );
      expect(await readdir(dir)).toEqual([]);
    },
    30_000,
  );

  it('an empty EMI_HISTORY_RETENTION_DAYS is unset, and a positive number is taken', async () => {
    // The two runs side by side, each in a folder of its own.
    const runs = await Promise.all(
      ['', '30'].map(async (value) =>
        emi(await scratch(), ['generate', ...RUN_FOLDERS, '--as-of', '2026-11-21T12:00:00Z'], {
          EMI_HISTORY_RETENTION_DAYS: value,
        }),
      ),
    );
    for (const run of runs) expect(run.code, run.stderr).toBe(0);
  }, 60_000);
});

describe('a mistyped EMI_VENUE_URL_* or EMI_SOURCE_ORDER_* name is refused, as the same typo in a file is', () => {
  const VENUE_URL_NAMES = VENUE_IDS.map(venueUrlEnvName).join(', ');
  const escape = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  it.each<[string, string[], Record<string, string>, RegExp]>([
    [
      'EMI_VENUE_URL_BINANCE emi sources check',
      ['sources', 'check', '--source', 'sim'],
      { EMI_VENUE_URL_BINANCE: 'https://data-api.binance.vision' },
      new RegExp(
        '^emi: invalid source configuration in environment: unknown variable EMI_VENUE_URL_BINANCE ' +
          '\\(did you mean EMI_VENUE_URL_BINANCE_SPOT or EMI_VENUE_URL_BINANCE_USDM\\?\\); ' +
          `the venue URL variables are ${escape(VENUE_URL_NAMES)}$`,
      ),
    ],
    [
      'EMI_VENUE_URL_BINANCE emi generate',
      ['generate', ...RUN_FOLDERS],
      { EMI_VENUE_URL_BINANCE: 'https://data-api.binance.vision' },
      /^emi: invalid source configuration in environment: unknown variable EMI_VENUE_URL_BINANCE \(did you mean/,
    ],
    [
      'EMI_VENUE_URL_KRAKN emi schedule',
      ['schedule', ...RUN_FOLDERS, '--dist', 'dist', '--base-url', 'https://emi.test'],
      { EMI_VENUE_URL_KRAKN: 'https://mirror.test' },
      /: unknown variable EMI_VENUE_URL_KRAKN \(did you mean EMI_VENUE_URL_KRAKEN\?\); the venue URL variables/,
    ],
    [
      'EMI_VENUE_URL_binance_spot emi up (names are upper case)',
      ['up', ...RUN_FOLDERS, '--dist', 'dist', ...ANY_PORTS, '--backfill-days', '0'],
      { EMI_VENUE_URL_binance_spot: 'https://mirror.test' },
      /: unknown variable EMI_VENUE_URL_binance_spot \(did you mean EMI_VENUE_URL_BINANCE_SPOT\?\)/,
    ],
    [
      'EMI_VENUE_URL_NOSUCH (no close match)',
      ['generate', ...RUN_FOLDERS],
      { EMI_VENUE_URL_NOSUCH: 'https://mirror.test' },
      new RegExp(
        `: unknown variable EMI_VENUE_URL_NOSUCH; the venue URL variables are ${escape(VENUE_URL_NAMES)}$`,
      ),
    ],
    [
      'EMI_SOURCE_ORDER_OPENINTEREST emi generate',
      ['generate', ...RUN_FOLDERS],
      { EMI_SOURCE_ORDER_OPENINTEREST: 'bybit' },
      /: unknown variable EMI_SOURCE_ORDER_OPENINTEREST \(did you mean EMI_SOURCE_ORDER_OPEN_INTEREST\?\); the source order variables are EMI_SOURCE_ORDER_CANDLES, /,
    ],
  ])(
    '%s: exit 2, nothing written',
    async (_name, args, env, line) => {
      const dir = await scratch();
      expectUsageMistake(await emi(dir, args, env), line);
      expect(await readdir(dir)).toEqual([]);
    },
    30_000,
  );

  it('an empty unknown variable counts as unset', async () => {
    const dir = await scratch();
    const run = await emi(dir, ['sources', 'check', '--source', 'sim'], { EMI_VENUE_URL_BINANCE: '' });
    expect(run.code, run.stderr).toBe(0);
  });

  it('the right names still set the venues', () => {
    const config = configFromEnv({
      EMI_VENUE_URL_BINANCE_SPOT: 'https://data-api.binance.vision',
      EMI_SOURCE_ORDER_OPEN_INTEREST: 'bybit,okx',
      EMI_UNRELATED: 'x',
    });
    expect(config.venues?.['binance-spot']?.baseUrl).toBe('https://data-api.binance.vision');
    expect(config.order?.openInterest).toEqual(['bybit', 'okx']);
  });
});

describe('emi serve --dir', () => {
  it.each<[string, (dir: string) => Promise<void>, RegExp]>([
    [
      'a folder that does not exist',
      async () => {},
      /^emi: nothing to serve: folder nope does not exist \(--dir\); run emi build --out nope first, or give --dir the folder emi build wrote to$/,
    ],
    [
      'a file',
      (dir) => writeFile(join(dir, 'nope'), 'not a folder'),
      /^emi: nothing to serve: nope is not a folder \(--dir\)/,
    ],
  ])('refuses %s: exit 2, nothing started or written', async (_name, prepare, line) => {
    const dir = await scratch();
    await prepare(dir);
    const before = await readdir(dir);
    expectUsageMistake(await emi(dir, ['serve', '--dir', 'nope', ...ANY_PORTS]), line);
    expect(await readdir(dir)).toEqual(before); // no .nope.instance.json
  });

  it('the default folder is named as the one it expected', async () => {
    const dir = await scratch();
    expectUsageMistake(
      await emi(dir, ['serve', ...ANY_PORTS]),
      /^emi: nothing to serve: folder dist does not exist \(--dir\); run emi build --out dist first/,
    );
  });

  it('starts on a folder not built yet (no index.html), and says so in one line', async () => {
    const dir = await scratch();
    await mkdir(join(dir, 'dist'));
    const serve = start(dir, ['serve', ...ANY_PORTS]);
    try {
      await serve.waitFor(/site: http:\/\/127\.0\.0\.1:\d+\//);
    } finally {
      serve.stop();
    }
    const run = await serve.done;
    expect(errorLines(run)).toEqual([
      expect.stringMatching(
        /^emi: dist has no index\.html \(not built yet\?\): its pages answer 404 until emi build --out dist builds it$/,
      ),
    ]);
  });

  it('starts on a built folder without a word on stderr', async () => {
    const dir = await scratch();
    await mkdir(join(dir, 'dist'));
    await writeFile(join(dir, 'dist', 'index.html'), '<!doctype html><title>emi</title>');
    const serve = start(dir, ['serve', ...ANY_PORTS]);
    try {
      await serve.waitFor(/site: http:\/\/127\.0\.0\.1:\d+\//);
    } finally {
      serve.stop();
    }
    expect(errorLines(await serve.done)).toEqual([]);
  });
});

describe('emi validate: a folder that is not there is exit 2, not a list of missing files', () => {
  it.each<[string, string[], (dir: string) => Promise<void>, RegExp]>([
    [
      'the default folder, never generated',
      [],
      async () => {},
      /^emi: nothing to validate: folder site does not exist; run emi generate --out site first, or name the folder emi generate wrote to$/,
    ],
    [
      'a file',
      ['nope'],
      (dir) => writeFile(join(dir, 'nope'), 'not a folder'),
      /^emi: nothing to validate: nope is not a folder; name the folder emi generate wrote to$/,
    ],
    [
      '--paid, a folder that does not exist',
      ['site', '--paid', 'nope'],
      (dir) => mkdir(join(dir, 'site')),
      /^emi: nothing to validate: folder nope does not exist \(--paid\); run emi generate --paid nope first, or give --paid the folder emi generate wrote to$/,
    ],
  ])('%s', async (_name, args, prepare, line) => {
    const dir = await scratch();
    await prepare(dir);
    const run = await emi(dir, ['validate', ...args]);
    expectUsageMistake(run, line);
    expect(run.stdout).toBe(''); // no check ran
  });

  it('an empty folder that exists is still checked (exit 1, every missing file named)', async () => {
    const dir = await scratch();
    await mkdir(join(dir, 'site'));
    const run = await emi(dir, ['validate']);
    expect(run.code, run.stderr).toBe(1);
    expect(run.stdout).toMatch(/^FAIL api\/main-brain\.php: file is missing or unreadable$/m);
  });
});

describe('emi mcp --dir', () => {
  it('refuses a folder that does not exist: exit 2 before any paywall or facilitator starts', async () => {
    const dir = await scratch();
    expectUsageMistake(
      await emi(dir, ['mcp', '--dir', 'nope']),
      /^emi: nothing to serve: folder nope does not exist \(--dir\); run emi build --out nope first, or give --dir the folder emi build wrote to$/,
    );
    expect(await readdir(dir)).toEqual([]);
  });

  it('starts on a folder not built yet, and says so in one line on stderr', async () => {
    const dir = await scratch();
    await mkdir(join(dir, 'dist'));
    const mcp = start(dir, ['mcp']);
    await mcp.waitFor(/emi mcp: serving /);
    mcp.child.stdin?.end(); // the client is gone: the server ends
    const run = await mcp.done;
    expect(run.code, run.stderr).toBe(0);
    expect(errorLines(run)).toContainEqual(
      expect.stringMatching(
        /^emi mcp: dist has no index\.html \(not built yet\?\): its tools find no file until emi build --out dist builds it$/,
      ),
    );
  });
});

describe('emi sources check --source replay without --replay', () => {
  it('is a usage mistake, as for emi generate (exit 2)', async () => {
    const dir = await scratch();
    // Three refusals that write nothing, side by side; the folder is still empty once all have ended.
    const [checkRun, generateRun, replayWithoutSource] = await Promise.all([
      emi(dir, ['sources', 'check', '--source', 'replay']),
      emi(dir, ['generate', ...RUN_FOLDERS, '--source', 'replay']),
      emi(dir, ['sources', 'check', '--source', 'sim', '--replay', 'rec']),
    ]);
    expectUsageMistake(checkRun, /^emi: --source replay needs --replay DIR \(a folder made with --record\)$/);
    expectUsageMistake(
      generateRun,
      /^emi: --source replay needs --replay DIR \(a folder made with --record\)$/,
    );
    expectUsageMistake(replayWithoutSource, /^emi: --replay needs --source replay$/);
    expect(await readdir(dir)).toEqual([]);
  });
});

describe('emi build: a --site or --published folder that cannot be the one meant is exit 2', () => {
  it.each<[string, string[], (dir: string) => Promise<void>, RegExp]>([
    [
      '--site, a folder without the templates',
      ['--site', 'empty'],
      (dir) => mkdir(join(dir, 'empty')),
      /^emi: refusing to build: .*empty is not a site folder \(no index\.njk, /,
    ],
    [
      '--site /tmp',
      ['--site', tmpdir()],
      async () => {},
      /^emi: refusing to build: .* is not a site folder \(no index\.njk, /,
    ],
    [
      '--published, a folder that does not exist',
      ['--published', 'nope'],
      async () => {},
      /^emi: nothing to build from: folder nope does not exist \(--published\); run emi generate --out nope first, or give --published the folder emi generate wrote to$/,
    ],
    [
      '--published, a file',
      ['--published', 'nope'],
      (dir) => writeFile(join(dir, 'nope'), 'not a folder'),
      /^emi: nothing to build from: nope is not a folder \(--published\); give --published the folder emi generate wrote to$/,
    ],
  ])('%s', async (_name, args, prepare, line) => {
    const dir = await scratch();
    await prepare(dir);
    const before = await readdir(dir);
    expectUsageMistake(await emi(dir, ['build', '--base-url', 'https://emi.test', ...args]), line);
    expect(await readdir(dir)).toEqual(before);
  });

  it('a published folder whose files are missing (a first run that failed) stays exit 1', async () => {
    const dir = await scratch();
    await mkdir(join(dir, 'site'));
    const run = await emi(dir, ['build', '--base-url', 'https://emi.test']);
    expect(run.code, run.stderr).toBe(1);
    expect(errorLines(run)).toEqual([expect.stringMatching(/published file\(s\) missing or invalid/)]);
  });
});

describe('--state and EMI_STATE_DIR', () => {
  it.each([['generate'], ['schedule'], ['up']])('emi %s --help names EMI_STATE_DIR', async (command) => {
    const dir = await scratch();
    const help = (await emi(dir, [command, '--help'])).stdout;
    const entry = help.split(/\n(?=\s+-)/).find((line) => line.trimStart().startsWith('--state'));
    expect(entry?.replace(/\s+/g, ' ')).toMatch(/\(env EMI_STATE_DIR\) \(default: "var"\)/);
  });

  it('EMI_STATE_DIR is where emi generate keeps its state; --state wins over it', async () => {
    const dir = await scratch();
    const asOf = ['--as-of', '2026-11-21T12:00:00Z'];
    const base = ['generate', '--out', 'site', '--paid', 'paid', ...asOf];
    const fromEnv = await emi(dir, base, { EMI_STATE_DIR: 'state-env' });
    expect(fromEnv.code, fromEnv.stderr).toBe(0);
    expect(existsSync(join(dir, 'state-env', 'last-run.json'))).toBe(true);
    const fromOption = await emi(dir, [...base, '--state', 'state-opt'], { EMI_STATE_DIR: 'state-env' });
    expect(fromOption.code, fromOption.stderr).toBe(0);
    expect(existsSync(join(dir, 'state-opt', 'last-run.json'))).toBe(true);
    expect((await readdir(dir)).sort()).toEqual(['paid', 'site', 'state-env', 'state-opt']);
  }, 60_000);
});

describe('emi schedule: a skipped tick', () => {
  it("is one plain line of emi's own, without node-cron's coloured warning", async () => {
    const dir = await scratch();
    // Live venues that refuse every connection, with a 1.5 s collection deadline: each run outlasts the 1 s tick
    // whatever the machine's speed (a fast machine finished the simulated first cycle within the tick).
    const dead = `http://127.0.0.1:${await freePort()}`;
    const venues = Object.fromEntries(VENUE_IDS.map((venue) => [venueUrlEnvName(venue), `${dead}/${venue}`]));
    const schedule = start(
      dir,
      [
        'schedule',
        '--cron',
        '* * * * * *',
        '--source',
        'live',
        ...RUN_FOLDERS,
        '--dist',
        'dist',
        '--base-url',
        'https://emi.test',
      ],
      { ...venues, EMI_COLLECT_DEADLINE_SECONDS: '1.5' },
      60_000,
    );
    try {
      // node-cron warns in the skipped tick, before the run in progress ends.
      await schedule.waitFor(/this tick was skipped[^]*published nothing/);
    } finally {
      schedule.stop();
    }
    const run = await schedule.done;
    const output = run.stdout + run.stderr;
    expect(output).toMatch(/^previous run still in progress: this tick was skipped$/m);
    expect(output).not.toContain('NODE-CRON');
    expect(output).not.toContain('\x1b[');
  }, 60_000);
});
