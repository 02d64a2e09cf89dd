// The site build checks the published history as `emi validate` does (generator/site/history-check.ts): a day file
// that is not JSON, whose rows fail their schema, or whose CSV twin disagrees with it is never linked into the site
// as it is. The build is refused, naming the file and what to do; the site built before stays served, and the
// refusal is recorded in status.json. `emi build` and `emi schedule` are the real CLI; the cycle of `emi schedule`
// and `emi up` also runs in this process, where it must not read the unchanged day files again every cycle.
import { execFileSync } from 'node:child_process';
import { open, mkdtemp, readFile, readlink, rename, rm, writeFile } from 'node:fs/promises';
import * as fsPromises from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { publishCycle } from '../generator/cycle.ts';
import type { RunReport } from '../generator/pipeline.ts';
import { runEmi, startEmi } from './ops-cli.ts';
import { simulatedCycle } from './helpers/simulated-run.ts';

/** Every history day file this process reads (JSON or CSV twin), by path. */
const dayReads: string[] = [];
const DAY_FILE = /\/api\/history\/[^/]+\/\d{4}-\d{2}-\d{2}\.(json|csv)$/;

vi.mock('node:fs/promises', async (importOriginal) => {
  const real = await importOriginal<typeof fsPromises>();
  const noted = (path: unknown) => {
    if (typeof path === 'string' && DAY_FILE.test(path)) dayReads.push(path);
  };
  return {
    ...real,
    readFile: ((path: unknown, ...rest: unknown[]) => {
      noted(path);
      return (real.readFile as (...args: unknown[]) => unknown)(path, ...rest);
    }) as typeof real.readFile,
    open: ((path: unknown, ...rest: unknown[]) => {
      noted(path);
      return (real.open as (...args: unknown[]) => unknown)(path, ...rest);
    }) as typeof real.open,
  };
});

const BASE_URL = 'http://127.0.0.1:19851';
const DAY_MS = 86_400_000;
/** Days well in the past (runs may not describe the future), and within any retention. */
const midnight = Math.floor(Date.now() / DAY_MS) * DAY_MS;
const PAST_DAY = midnight - 3 * DAY_MS;
const NEXT_DAY = midnight - 2 * DAY_MS;
const dayOf = (ms: number) => new Date(ms).toISOString().slice(0, 10);
const at = (day: number, minutes: number) => new Date(day + minutes * 60_000).toISOString();

let root: string;
beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'emi-build-s39-'));
});
afterAll(() => rm(root, { recursive: true, force: true }));

/** A published site of two days: a run in the middle of PAST_DAY (final once) and one early on NEXT_DAY. */
async function generateTwoDays(dir: string): Promise<string> {
  await fsPromises.mkdir(dir);
  for (const asOf of [at(PAST_DAY, 720), at(NEXT_DAY, 10)]) {
    const run = await runEmi(dir, ['generate', '--as-of', asOf, ...FOLDERS]);
    expect(run.code, run.stdout + run.stderr).toBe(0);
  }
  return dir;
}
let twoDays: Promise<string> | undefined;
/**
 * A copy of that site, generated once for the file: the runs write the same files whenever they run (only the
 * times they started and finished differ), name no folder of their own in them, and link site/ and paid/ to the
 * state folder by relative links, copied as they are. Each test damages its own copy.
 */
async function generatedSite(name: string): Promise<string> {
  twoDays ??= generateTwoDays(join(root, 'two-days'));
  const dir = join(root, name);
  await fsPromises.cp(await twoDays, dir, {
    recursive: true,
    verbatimSymlinks: true,
    preserveTimestamps: true,
  });
  return dir;
}

const FOLDERS = ['--out', 'site', '--paid', 'paid', '--state', 'var'];
const BUILD = ['build', '--published', 'site', '--out', 'dist', '--base-url', BASE_URL];
const dayPath = (resource: string, day: number, ext = 'json') =>
  `api/history/${resource}/${dayOf(day)}.${ext}`;

/** Replaces a file by rename, as a restore, an editor or a copy would: the served build keeps the old file. */
async function replaceFile(file: string, text: string): Promise<void> {
  await writeFile(`${file}.new`, text);
  await rename(`${file}.new`, file);
}

async function editRows(file: string, edit: (rows: Array<Record<string, unknown>>) => void): Promise<void> {
  const body = JSON.parse(await readFile(file, 'utf8')) as { rows: Array<Record<string, unknown>> };
  edit(body.rows);
  await replaceFile(file, `${JSON.stringify(body, null, 2)}\n`);
}

const servedGeneration = (dir: string) => readlink(join(dir, '.dist.generations', 'current'));
const buildRecord = async (file: string) =>
  (JSON.parse(await readFile(file, 'utf8')) as { build?: { status: string; error: string } }).build;

describe('emi build with a damaged history day file', () => {
  it('refuses a day file that is not JSON, keeps the site served before, and builds once it is restored', async () => {
    const dir = await generatedSite('not-json');
    expect((await runEmi(dir, BUILD)).code).toBe(0);
    const file = join(dir, 'site', dayPath('main-brain', PAST_DAY));
    const good = await readFile(file, 'utf8');
    const served = await servedGeneration(dir);

    await replaceFile(file, good.slice(0, 300)); // cut short, as a full disk or an interrupted copy leaves it
    const refused = await runEmi(dir, BUILD);
    expect(refused.code, refused.stdout + refused.stderr).toBe(1);
    expect(refused.stderr).toContain(
      `refusing to build: 1 published history file(s) damaged in ${join(dir, 'site')}: ` +
        `${dayPath('main-brain', PAST_DAY)}: not JSON`,
    );
    expect(refused.stderr).toContain(`emi validate ${join(dir, 'site')}`);
    expect(refused.stderr).toMatch(/restore each from a backup, or move the damaged day/);
    expect(refused.stdout).not.toMatch(/^built /m);
    // Nothing switched: readers still get the day as it was, and both status files say why the site is older.
    expect(await servedGeneration(dir)).toBe(served);
    expect(await readFile(join(dir, 'dist', dayPath('main-brain', PAST_DAY)), 'utf8')).toBe(good);
    for (const status of ['site/status.json', 'dist/status.json']) {
      const build = await buildRecord(join(dir, status));
      expect(build?.status, status).toBe('failed');
      expect(build?.error, status).toContain(dayPath('main-brain', PAST_DAY));
    }

    await replaceFile(file, good); // restored from a backup
    const rebuilt = await runEmi(dir, BUILD);
    expect(rebuilt.code, rebuilt.stderr).toBe(0);
    expect(await servedGeneration(dir)).not.toBe(served);
    expect(await buildRecord(join(dir, 'dist/status.json'))).toBeUndefined();
  }, 120_000);

  it('refuses rows that fail their schema and a CSV twin that disagrees, which emi validate names too', async () => {
    const dir = await generatedSite('bad-rows');
    expect((await runEmi(dir, BUILD)).code).toBe(0);
    const site = join(dir, 'site');
    const statistics = join(site, dayPath('statistics', PAST_DAY));
    const csv = join(site, dayPath('derivatives', PAST_DAY, 'csv'));
    const [goodStatistics, goodCsv] = await Promise.all([
      readFile(statistics, 'utf8'),
      readFile(csv, 'utf8'),
    ]);
    await editRows(statistics, (rows) => {
      rows[0]!.brain_n = 'many';
    });
    await replaceFile(csv, goodCsv.replace(',simulated,', ',live,')); // its JSON twin still says simulated

    const refused = await runEmi(dir, BUILD);
    expect(refused.code, refused.stdout + refused.stderr).toBe(1);
    expect(refused.stderr).toContain('refusing to build: 2 published history file(s) damaged');
    expect(refused.stderr).toContain(`${dayPath('statistics', PAST_DAY)}: rows.0.brain_n: `);
    expect(refused.stderr).toContain(
      `${dayPath('derivatives', PAST_DAY, 'csv')}: record 1 after the header line disagrees with rows.0`,
    );
    expect(await readFile(join(dir, 'dist', dayPath('derivatives', PAST_DAY, 'csv')), 'utf8')).toBe(goodCsv);
    const validate = await runEmi(dir, ['validate', 'site']);
    expect(validate.code).toBe(1);
    expect(validate.stdout).toMatch(
      new RegExp(`^FAIL ${dayPath('derivatives', PAST_DAY, 'csv')}: record 1 after the header line`, 'm'),
    );

    await replaceFile(statistics, goodStatistics);
    await replaceFile(csv, goodCsv);
    expect((await runEmi(dir, BUILD)).code).toBe(0);
    // A later one-off build reads only the files that changed: the versions checked by the build before are
    // recorded beside the built site. Bytes changed in place with their size and time put back (no writer of
    // emi does that) go unseen by the build; only a read, as `emi validate` makes, would see them.
    const mainBrain = join(site, dayPath('main-brain', PAST_DAY));
    const stamp = join(dir, 'stamp');
    await writeFile(stamp, '');
    execFileSync('touch', ['-r', mainBrain, stamp]);
    const handle = await open(mainBrain, 'r+');
    await handle.write('X', 0);
    await handle.close();
    execFileSync('touch', ['-r', stamp, mainBrain]);
    expect((await runEmi(dir, ['validate', 'site'])).stdout).toMatch(/^FAIL api\/history\/main-brain\//m);
    const unread = await runEmi(dir, BUILD);
    expect(unread.code, unread.stderr).toBe(0);
  }, 120_000);

  it('emi schedule says so every cycle on stderr and in status.json, and keeps running', async () => {
    const dir = await generatedSite('schedule');
    expect((await runEmi(dir, BUILD)).code).toBe(0);
    await editRows(join(dir, 'site', dayPath('main-brain', PAST_DAY)), (rows) => {
      rows[0]!.btc_price = 'abc';
    });
    const schedule = startEmi(
      dir,
      ['schedule', '--cron', '*/2 * * * * *', ...FOLDERS, '--dist', 'dist', '--base-url', BASE_URL],
      {},
      { timeoutMs: 110_000 },
    );
    try {
      const refusal = new RegExp(
        `emi: the build after the run failed: refusing to build: 1 published history file\\(s\\) damaged in \\S+: ` +
          `${dayPath('main-brain', PAST_DAY).replaceAll('.', '\\.')}: rows\\.0\\.btc_price`,
      );
      // Two cycles refused: the process lives on after the first.
      await schedule.waitFor(new RegExp(`${refusal.source}[\\s\\S]*${refusal.source}`));
      expect(schedule.output()).toMatch(/^generated \d+ files for /m); // the runs themselves published
      const build = await buildRecord(join(dir, 'dist/status.json'));
      expect(build?.status).toBe('failed');
      expect(build?.error).toContain(dayPath('main-brain', PAST_DAY));
    } finally {
      schedule.stop();
    }
    const finished = await schedule.done;
    expect(finished.code, finished.stdout + finished.stderr).toBe(0);
  }, 120_000);
});

describe('the in-process cycle of emi schedule and emi up', () => {
  it('refuses a damaged day without reading the unchanged ones every cycle, and recovers once it is restored', async () => {
    const dir = join(root, 'cycle');
    const flags = (asOf: number) => simulatedCycle(dir, asOf, BASE_URL);
    const cycle = async (minutes: number) => {
      const reports: RunReport[] = [];
      const report = await publishCycle(flags(NEXT_DAY + minutes * 60_000), (r) => reports.push(r));
      return { report, reports };
    };
    expect((await publishCycle(flags(PAST_DAY + 720 * 60_000))).status).toBe('ok');
    for (const minutes of [10, 20]) expect((await cycle(minutes)).report.status).toBe('ok');
    // A cycle of a process that has been running: the day files it did not write, and those its run wrote, are
    // known; none is read again.
    dayReads.length = 0;
    expect((await cycle(30)).report.status).toBe('ok');
    expect(dayReads).toEqual([]);

    const file = join(dir, 'site', dayPath('main-brain', PAST_DAY));
    const good = await readFile(file, 'utf8');
    const served = await servedGeneration(dir);
    await editRows(file, (rows) => {
      rows[0]!.btc_price = 'abc';
    });
    const reports: RunReport[] = [];
    await expect(publishCycle(flags(NEXT_DAY + 40 * 60_000), (r) => reports.push(r))).rejects.toThrow(
      new RegExp(
        `^refusing to build: 1 published history file\\(s\\) damaged in .*${dayPath('main-brain', PAST_DAY)}: ` +
          'rows\\.0\\.btc_price: ',
      ),
    );
    expect(reports.map((r) => r.status)).toEqual(['ok']); // the run published; only the build was refused
    expect(await servedGeneration(dir)).toBe(served);
    expect(await readFile(join(dir, 'dist', dayPath('main-brain', PAST_DAY)), 'utf8')).toBe(good);
    expect((await buildRecord(join(dir, 'var', 'last-run.json')))?.status).toBe('failed');
    expect((await buildRecord(join(dir, 'dist', 'status.json')))?.error).toContain('emi validate');

    await replaceFile(file, good);
    expect((await cycle(50)).report.status).toBe('ok');
    expect(await servedGeneration(dir)).not.toBe(served);
    expect(await buildRecord(join(dir, 'dist', 'status.json'))).toBeUndefined();
  }, 120_000);
});
