// The run log says what happened to each run, and `emi arena status` says what it finds, with real `emi`
// processes: a run whose files did not land (a full disk, a bad setting, a signal) is never counted `ok`, neither
// by `emi arena status` nor in /api/statistics.php; a run killed while publishing is counted as unfinished by the
// next run. A status that meets a damaged store, a full disk, a dead run's lock, no store at all or a folder it may
// not write says so, naming the file and what to do, and never creates a store.
import { existsSync } from 'node:fs';
import { chmod, readFile, readdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { Command } from 'commander';
import { registerArenaCommands } from '../generator/state/cli.ts';
import { withRunLock } from '../generator/state/lock.ts';
import { MIGRATIONS } from '../generator/state/migrations.ts';
import { NO_END_PRICE, runArenaStep } from '../generator/state/step.ts';
import { TRACKED_ASSETS } from '../schemas/common.ts';
import { openArenaStore } from '../generator/state/store.ts';
import {
  callsFor,
  HOUR,
  MINUTE,
  pricesAll,
  rewindToSchema2,
  step,
  T0,
  tempStore,
  tempStorePath,
} from './arena-fixtures.ts';
import { canRunAsNobody, corruptStore, generateArgs, runEmi, runEmiAsNobody, startEmi } from './ops-cli.ts';
import { fillDisk, tmpfsMounter } from './helpers/tmpfs.ts';
import { tempDir } from './helpers/temp-dir.ts';

const { allowed: canMount, mount: mountTmpfs } = tmpfsMounter();
if (!canMount)
  console.warn('ops-run-log-truth: full-disk cases skipped, mounting a tmpfs is not permitted here');
const asNobody = canRunAsNobody();

interface RunRow {
  as_of_ms: number;
  status: string;
  detail: string | null;
}

/** The run log, read without changing the store. */
function runLog(dir: string): RunRow[] {
  const db = new Database(join(dir, 'var/arena.sqlite'), { readonly: true, fileMustExist: true });
  try {
    return db.prepare('SELECT as_of_ms, status, detail FROM run_log ORDER BY id').all() as RunRow[];
  } finally {
    db.close();
  }
}

const rowsAt = (dir: string, asOf: string): RunRow[] =>
  runLog(dir).filter((row) => row.as_of_ms === Date.parse(asOf));

interface Statistics {
  updated_utc: string;
  developer_note: string;
  api_ecosystem: { generator_runs: { total: number; ok: number; failed: number } };
}

const statistics = async (dir: string): Promise<Statistics> =>
  JSON.parse(await readFile(join(dir, 'site/api/statistics.php'), 'utf8')) as Statistics;

/** `emi arena status` in `dir`, its lines on stdout and stderr together. */
async function arenaStatus(dir: string): Promise<{ code: number | null; text: string; stderr: string }> {
  const { code, stdout, stderr } = await runEmi(dir, ['arena', 'status']);
  return { code, text: stdout + stderr, stderr };
}

async function firstRun(prefix: string, asOf = '2026-11-26T11:00:00Z'): Promise<string> {
  const dir = await tempDir(prefix);
  const first = await runEmi(dir, generateArgs(asOf));
  expect(first.code, first.stderr).toBe(0);
  return dir;
}

describe.skipIf(!canMount)('runs that fail on a full disk', () => {
  it('are logged failed with the cause; arena status and statistics.php count them failed', async () => {
    const dir = await tempDir('emi-runlog-full-', 'file');
    expect(mountTmpfs(dir, '2m')).toBe(true);
    for (const minute of ['27', '28']) {
      const good = await runEmi(dir, generateArgs(`2026-11-26T11:${minute}:00Z`));
      expect(good.code, good.stderr).toBe(0);
    }
    // Room for the store's own small writes, not for a generation: the run fails while publishing.
    await fillDisk(dir, 120 * 1024);
    const failedAt = ['31', '32', '33', '34'].map((minute) => `2026-11-26T11:${minute}:00Z`);
    for (const asOf of failedAt) {
      const run = await runEmi(dir, generateArgs(asOf));
      expect(run.code).toBe(1);
      expect(run.stderr).toMatch(/^emi: generate failed: .*(ENOSPC|no space left)/m);
    }
    const status = await arenaStatus(dir);
    expect(status.text).toMatch(/^last run: failed, finished .*ENOSPC/m);
    expect(status.text).toMatch(/^generator runs: 2 ok, 4 failed$/m);
    await rm(join(dir, 'filler'), { force: true });

    for (const asOf of failedAt) {
      expect(rowsAt(dir, asOf)).toEqual([
        expect.objectContaining({ status: 'failed', detail: expect.stringMatching(/ENOSPC/) }),
      ]);
    }
    const next = await runEmi(dir, generateArgs('2026-11-26T11:35:00Z'));
    expect(next.code, next.stderr).toBe(0);
    const stats = await statistics(dir);
    expect(stats.updated_utc).toBe('2026-11-26T11:35:00.000Z');
    expect(stats.api_ecosystem.generator_runs).toMatchObject({ total: 7, ok: 3, failed: 4 });
    expect((await arenaStatus(dir)).text).toMatch(/^generator runs: 3 ok, 4 failed$/m);
  }, 180_000);
});

describe('a run that fails on a bad setting', () => {
  it('is never logged ok', async () => {
    const dir = await firstRun('emi-runlog-setting-');
    const asOf = '2026-11-26T12:00:00Z';
    const bad = await runEmi(dir, generateArgs(asOf), { EMI_HISTORY_RETENTION_DAYS: 'ten' });
    expect(bad.code).not.toBe(0);
    expect(bad.stderr).toMatch(/EMI_HISTORY_RETENTION_DAYS/);
    // Refused before the store (no row) or failed after it: never `ok`.
    expect(rowsAt(dir, asOf).map((row) => row.status)).not.toContain('ok');
    expect((await arenaStatus(dir)).text).toMatch(/^generator runs: 1 ok, \d+ failed$/m);
    const next = await runEmi(dir, generateArgs('2026-11-26T13:00:00Z'));
    expect(next.code, next.stderr).toBe(0);
    expect((await statistics(dir)).api_ecosystem.generator_runs.ok).toBe(2);
  }, 120_000);
});

describe('a run stopped while publishing', () => {
  it('by SIGTERM is logged failed, saying so', async () => {
    const dir = await firstRun('emi-runlog-term-');
    const asOf = '2026-11-26T12:00:00Z';
    const run = startEmi(dir, generateArgs(asOf), { EMI_TEST_HOLD_AT_FIRST_STAGED_FILE: '1' });
    await run.waitFor('holding at the first staged file');
    run.child.kill('SIGTERM');
    expect((await run.done).signal).toBe('SIGTERM');
    expect(rowsAt(dir, asOf)).toEqual([
      expect.objectContaining({ status: 'failed', detail: expect.stringMatching(/SIGTERM/) }),
    ]);
    expect((await arenaStatus(dir)).text).toMatch(/^generator runs: 1 ok, 1 failed$/m);
  }, 120_000);

  it('by kill -9 is shown as unfinished, with its lock’s process gone, and counted by the next run', async () => {
    const dir = await firstRun('emi-runlog-kill-');
    const asOf = '2026-11-26T12:00:00Z';
    const run = startEmi(dir, generateArgs(asOf), { EMI_TEST_HOLD_AT_FIRST_STAGED_FILE: '1' });
    await run.waitFor('holding at the first staged file');
    const pid = run.child.pid!;
    run.child.kill('SIGKILL');
    expect((await run.done).signal).toBe('SIGKILL');
    expect(rowsAt(dir, asOf).map((row) => row.status)).not.toContain('ok');

    const status = await arenaStatus(dir);
    expect(status.code).toBe(0);
    expect(status.text).toMatch(
      new RegExp(
        `^run lock: held by pid ${pid} on .+: its process ${pid} is gone; the next run takes it over`,
        'm',
      ),
    );
    expect(status.text).toMatch(/^generator runs: 1 ok, 1 failed \(1 of them unfinished: /m);

    const next = await runEmi(dir, generateArgs('2026-11-26T13:00:00Z'));
    expect(next.code, next.stderr).toBe(0);
    expect(rowsAt(dir, asOf)).toEqual([
      expect.objectContaining({ status: 'unfinished', detail: expect.stringMatching(/killed/) }),
    ]);
    const stats = await statistics(dir);
    expect(stats.api_ecosystem.generator_runs).toMatchObject({ total: 3, ok: 2, failed: 1 });
    expect(stats.developer_note).toMatch(/generator_runs\.failed includes 1 run that never finished/);
    const after = await arenaStatus(dir);
    expect(after.text).toMatch(/^generator runs: 2 ok, 1 failed \(1 of them unfinished: /m);
    expect(after.text).toMatch(/^run lock: free$/m);
  }, 180_000);
});

describe('emi arena status', () => {
  it('names a damaged store and says to run emi arena repair', async () => {
    const dir = await firstRun('emi-status-damaged-');
    await corruptStore(join(dir, 'var/arena.sqlite'));
    const status = await arenaStatus(dir);
    expect(status.code).toBe(1);
    expect(status.stderr).toMatch(
      /^emi arena: the arena store .*var\/arena\.sqlite is damaged \(file is not a database\): run "emi arena repair"/m,
    );
  }, 60_000);

  it.skipIf(!canMount)(
    'on a full disk names the store and says to check the free space',
    async () => {
      const dir = await tempDir('emi-status-full-', 'file');
      expect(mountTmpfs(dir, '2m')).toBe(true);
      const first = await runEmi(dir, generateArgs('2026-11-26T11:00:00Z'));
      expect(first.code, first.stderr).toBe(0);
      await fillDisk(dir, 0);
      const status = await arenaStatus(dir);
      await rm(join(dir, 'filler'), { force: true });
      expect(status.text).not.toMatch(/^emi arena: disk I\/O error$/m);
      expect(status.stderr).toMatch(/the arena store .*var\/arena\.sqlite .*check the free space .*df /);
      // What could be read is still shown.
      expect(status.text).toMatch(/^generator runs: 1 ok, 0 failed$/m);
    },
    60_000,
  );

  it('in a folder without a store says so, and creates nothing', async () => {
    const dir = await tempDir('emi-status-none-');
    const status = await arenaStatus(dir);
    expect(status.code).toBe(1);
    expect(status.stderr).toMatch(/^emi arena: no arena store at .*var\/arena\.sqlite: /m);
    expect(status.text).not.toMatch(/generator runs:/);
    expect(await readdir(dir)).toEqual([]);
    expect(existsSync(join(dir, 'var'))).toBe(false);
  }, 60_000);

  it.skipIf(!asNobody)(
    'reads a store in a folder it may not write',
    async () => {
      const dir = await firstRun('emi-status-readonly-');
      await chmod(dir, 0o755); // root's folder, readable by all (mkdtemp makes it private)
      const before = (await readdir(join(dir, 'var'))).sort();
      const status = await runEmiAsNobody(dir, ['arena', 'status']);
      expect(status.stderr).not.toMatch(/not writable/);
      expect(status.code, status.stderr).toBe(0);
      expect(status.stdout).toMatch(/^generator runs: 1 ok, 0 failed$/m);
      expect(status.stdout).toMatch(/^run lock: free$/m);
      expect((await readdir(join(dir, 'var'))).sort()).toEqual(before);
    },
    60_000,
  );
});

describe('the run log in the store', () => {
  const statuses = (file: string) => {
    const db = new Database(file, { readonly: true });
    try {
      return db.prepare('SELECT status, detail, arena_step FROM run_log ORDER BY id').all();
    } finally {
      db.close();
    }
  };

  it('settles a locked run ok when it returns, failed with the cause when it throws', async () => {
    const store = tempStore();
    try {
      await withRunLock(store, 'run-a', () => void step(store, T0 + MINUTE));
      await expect(
        withRunLock(store, 'run-b', () => {
          step(store, T0 + 2 * MINUTE);
          throw new Error('ENOSPC: no space left on device, write');
        }),
      ).rejects.toThrow('ENOSPC');
      expect(statuses(store.path)).toEqual([
        { status: 'ok', detail: null, arena_step: 1 },
        { status: 'failed', detail: 'ENOSPC: no space left on device, write', arena_step: 1 },
      ]);
    } finally {
      store.close();
    }
  });

  it('counts its own run ok in the bodies it builds, and a row left pending as unfinished', async () => {
    const store = tempStore();
    try {
      // A run whose row cannot be settled (the store no longer takes writes): said, and left pending.
      const left = await withRunLock(store, 'run-a', () => {
        step(store, T0 + MINUTE);
        store.db.pragma('query_only = ON');
        return 'published';
      });
      expect(left).toBe('published');
      store.db.pragma('query_only = OFF');
      expect(statuses(store.path)).toEqual([{ status: 'pending', detail: null, arena_step: 1 }]);
      // Nor could its lock be released: the next run takes it over once its heartbeat is past.
      const later = { now: () => Date.now() + 5 * 60_000, notice: () => undefined };
      const bodies = await withRunLock(store, 'run-b', () => step(store, T0 + 2 * MINUTE), later);
      expect(bodies.statistics.api_ecosystem.generator_runs).toMatchObject({ total: 2, ok: 1, failed: 1 });
      expect(bodies.statistics.developer_note).toMatch(
        /generator_runs\.failed includes 1 run that never finished/,
      );
      expect(bodies.sharedIntelligence.system_integrity.runs_failed).toBe(1);
      expect(statuses(store.path)).toEqual([
        {
          status: 'unfinished',
          detail: expect.stringMatching(/^the run ended before it recorded/),
          arena_step: 1,
        },
        { status: 'ok', detail: null, arena_step: 1 },
      ]);
    } finally {
      store.close();
    }
  });

  it('a run that came in time but failed publishing still counts as having seen the round end', async () => {
    const store = tempStore();
    const run = (at: number, priceTime: number) =>
      runArenaStep({
        store,
        asOf: at,
        clock: { asOf: at, generatedAt: at, nextUpdateDue: at + MINUTE },
        mode: 'simulated',
        seed: 7,
        brainCalls: callsFor('bullish', 60, 100),
        prices: pricesAll(100),
        priceTimes: Object.fromEntries(TRACKED_ASSETS.map((asset) => [asset, priceTime])),
      });
    try {
      run(T0 + MINUTE, T0 + MINUTE);
      // In the resolve window, with a price from before the round end (the round waits); then publishing fails.
      await expect(
        withRunLock(store, 'run-a', () => {
          run(T0 + HOUR + 5 * MINUTE, T0 + HOUR - 10 * MINUTE);
          throw new Error('ENOSPC: no space left on device, write');
        }),
      ).rejects.toThrow('ENOSPC');
      run(T0 + HOUR + 40 * MINUTE, T0 + HOUR + 40 * MINUTE);
      // Voided for want of an end price, not because no run came in time: one did, its records are in the store.
      expect(store.db.prepare('SELECT void_reason FROM outcomes').all()).toEqual([
        { void_reason: NO_END_PRICE },
      ]);
    } finally {
      store.close();
    }
  });

  it('migrates an older run log, keeping its rows as they were recorded', () => {
    const file = tempStorePath();
    const old = openArenaStore(file);
    old.close();
    const db = new Database(file);
    rewindToSchema2(db);
    db.prepare(
      "INSERT INTO run_log (owner, mode, as_of_ms, finished_at_ms, status, detail) VALUES ('old', 'simulated', 1, 1, ?, ?)",
    ).run('ok', null);
    db.prepare(
      "INSERT INTO run_log (owner, mode, as_of_ms, finished_at_ms, status, detail) VALUES ('old', 'simulated', 2, 2, ?, ?)",
    ).run('failed', 'boom');
    db.close();
    const store = openArenaStore(file);
    try {
      expect(statuses(file)).toEqual([
        { status: 'ok', detail: null, arena_step: 1 },
        { status: 'failed', detail: 'boom', arena_step: 0 },
      ]);
      expect(
        (store.db.prepare('SELECT MAX(version) AS v FROM schema_migrations').get() as { v: number }).v,
      ).toBe(MIGRATIONS.at(-1)!.version);
    } finally {
      store.close();
    }
  });

  it('emi arena status reads a store of an older schema without migrating it', async () => {
    const file = tempStorePath();
    openArenaStore(file).close();
    const db = new Database(file);
    // What a store of schema version 2 holds: the run log of before, and no later migration.
    rewindToSchema2(db);
    db.exec(
      "INSERT INTO run_log (owner, mode, as_of_ms, finished_at_ms, status) VALUES ('old', 'live', 1, 1, 'ok')",
    );
    db.close();
    const out: string[] = [];
    const err: string[] = [];
    const program = new Command().exitOverride();
    registerArenaCommands(program, {
      storePath: () => file,
      now: () => T0,
      out: (line) => out.push(line),
      err: (line) => err.push(line),
    });
    await program.parseAsync(['node', 'emi', 'arena', 'status']);
    expect(err).toEqual([]);
    expect(out).toContain(
      `store: ${file} (schema version 2; the next run migrates it to ${MIGRATIONS.at(-1)!.version})`,
    );
    // Its ok row was written by an emi that logged ok once the arena step ran: the line says so.
    expect(out).toContain(
      'generator runs: 1 ok, 0 failed; 1 of the ok logged before the store recorded whether files were ' +
        'published (schema 3): ok there means the arena step ran',
    );
    const after = new Database(file, { readonly: true });
    try {
      expect(after.prepare('SELECT MAX(version) AS v FROM schema_migrations').get()).toEqual({ v: 2 });
    } finally {
      after.close();
    }
  });
});
